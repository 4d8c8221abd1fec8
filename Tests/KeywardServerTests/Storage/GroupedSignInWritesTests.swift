// Tests: the writes every sign-in makes, grouped across concurrent sign-ins (sessions, passkeys' uses), give each
// caller the answer it would have had alone: a refused row fails only its own sign-in, and of concurrent uses of one
// passkey only those a one-at-a-time order would allow succeed.
import Foundation
import KeywardJOSE
@testable import KeywardServer
import XCTest

final class GroupedSignInWritesTests: XCTestCase {
    private static let rounds = 20

    func testConcurrentSessionsAreAllStoredAndABadRowFailsOnlyItsOwnSignIn() async throws {
        try await TestServer.forEachEngine { server, _ in
            let store = server.runtime.accounts.sessionStore
            let user = try await server.demoUser()
            // Whole seconds: stored times keep milliseconds.
            let now = Date(timeIntervalSince1970: server.clock.now().timeIntervalSince1970.rounded(.down))
            func session(_ index: Int, realm: String = "demo") -> BrowserSession {
                BrowserSession(
                    idHash: "grouped-\(index)", realm: realm, userId: user.id, stage: .authenticated, csrfToken: "csrf-\(index)", amr: ["pwd"],
                    signedInAt: now, sid: "sid-\(index)", createdAt: now, lastSeenAt: now, expiresAt: now.addingTimeInterval(3600)
                )
            }
            for round in 0..<Self.rounds {
                let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
                    for index in 0..<16 {
                        let id = round * 100 + index
                        let candidate = index == 7 ? session(id, realm: "no-such-realm") : session(id)
                        group.addTask { (index, (try? await store.insertSession(candidate)) != nil) }
                    }
                    return await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
                }
                XCTAssertEqual(outcomes.filter { !$0.value }.map(\.key), [7], "round \(round)")
                for index in 0..<16 where index != 7 {
                    let stored = try await store.session(idHash: "grouped-\(round * 100 + index)", now: now)
                    XCTAssertEqual(stored, session(round * 100 + index))
                }
            }
            do {
                try await store.insertSession(session(0))
                XCTFail("a session id stored already must be refused")
            } catch let error as StoreError {
                guard case .conflict = error else { return XCTFail("\(error)") }
            }
        }
    }

    /// A device-bound passkey's counter moves once however many sign-ins race with the same count; a synced
    /// passkey's 0 stays 0 and every sign-in succeeds, as they would one at a time.
    func testConcurrentUsesOfOnePasskeySucceedAsOneAtATimeWould() async throws {
        try await TestServer.forEachEngine { server, _ in
            let store = server.runtime.passkeys.service.store
            let user = try await server.demoUser()
            for (id, counted) in [("device-bound", true), ("synced", false)] {
                let inserted = try await store.insert(Passkey(
                    realm: "demo", credentialId: id, userId: user.id, publicKey: "unused", algorithm: -7, signCount: 0, backupEligible: !counted,
                    backedUp: !counted, userVerified: true, transports: [], aaguid: "00000000-0000-0000-0000-000000000000", attestationFormat: "none",
                    attestationTrusted: false, name: id, createdAt: server.clock.now(), lastUsedAt: nil, possiblyClonedAt: nil
                ))
                XCTAssertTrue(inserted)
            }
            for round in 0..<Self.rounds {
                let start = UInt32(round)
                let outcomes = await withTaskGroup(of: (String, Bool).self) { group in
                    for index in 0..<12 {
                        let id = index.isMultiple(of: 2) ? "device-bound" : "synced"
                        let next = id == "synced" ? 0 : start + 1
                        let expected = id == "synced" ? 0 : start
                        group.addTask {
                            let moved = (try? await store.recordUse(
                                realm: "demo", credentialId: id, expectedSignCount: expected, signCount: next, backedUp: id == "synced",
                                userVerified: true, at: Date(timeIntervalSince1970: 1_800_000_000 + Double(round))
                            )) ?? false
                            return (id, moved)
                        }
                    }
                    return await group.reduce(into: [String: Int]()) { if $1.1 { $0[$1.0, default: 0] += 1 } }
                }
                XCTAssertEqual(outcomes["device-bound"], 1, "round \(round): one sign-in moves the counter")
                XCTAssertEqual(outcomes["synced"], 6, "round \(round): a counter that stays 0 refuses nobody")
                let deviceBound = try await store.passkey(realm: "demo", credentialId: "device-bound")
                XCTAssertEqual(deviceBound?.signCount, start + 1)
                XCTAssertEqual(deviceBound?.lastUsedAt, Date(timeIntervalSince1970: 1_800_000_000 + Double(round)))
            }
            let stale = try await store.recordUse(
                realm: "demo", credentialId: "device-bound", expectedSignCount: 0, signCount: 99, backedUp: false, userVerified: true, at: server.clock.now()
            )
            XCTAssertFalse(stale, "a use that read an older counter changes nothing")
            let unknown = try await store.recordUse(
                realm: "other", credentialId: "device-bound", expectedSignCount: UInt32(Self.rounds), signCount: 99, backedUp: false, userVerified: true,
                at: server.clock.now()
            )
            XCTAssertFalse(unknown, "a passkey is its realm's")
        }
    }
}
