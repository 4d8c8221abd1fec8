// Tests: realm signing key rotation keeps old tokens verifying, reaches other nodes at once, resists made-up kids.
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
import NIOCore
@testable import KeywardServer
import Synchronization
import XCTest

final class KeyRotationTests: XCTestCase {
    func testRotationKeepsThePreviousKeyPublishedUntilItsTokensExpire() async throws {
        try await TestServer.forEachEngine { server, client in
            let key = try SigningKey.generate(.es256)
            let oldToken = try await client.demoToken(server, key: key)
            let oldKid = try XCTUnwrap(try JWS.parse(oldToken).header["kid"]?.stringValue)

            let found = try await server.runtime.oauth.realms.realm(named: "demo")
            let realm = try XCTUnwrap(found)
            let newKey = try await server.runtime.oauth.keys.rotate(realm: realm)
            XCTAssertNotEqual(newKey.kid, oldKid)

            let kids = try await client.execute(uri: "/realms/demo/protocol/openid-connect/certs", method: .get) { response in
                try JWKSet(json: response.body.readableBytesView).keys.compactMap(\.kid)
            }
            XCTAssertEqual(Set(kids), [oldKid, newKey.kid])

            // New tokens are signed by the new key; old tokens still verify.
            let newToken = try await client.demoToken(server, key: key)
            XCTAssertEqual(try JWS.parse(newToken).header["kid"]?.stringValue, newKey.kid)
            let stillValid = try await client.whoami(authorization: ["DPoP " + oldToken], proofs: [try server.resourceProof(key, token: oldToken)])
            XCTAssertEqual(stillValid.status, .ok)

            // Once every token of the old key has expired, the key leaves the JWKS and the sweeper deletes it.
            server.clock.advance(by: TimeInterval(realm.accessTokenLifetime) + 31)
            let remaining = try await server.runtime.oauth.keys.listKeys(realm: "demo")
            XCTAssertEqual(remaining.map(\.kid), [newKey.kid])
        }
    }

    /// Another node's rotation: a token signed with the new key verifies on a node whose cached key set predates the
    /// key (the unknown kid reloads the set at once), instead of 401s until that node's cache expires.
    func testATokenFromAKeyAnotherNodeJustRotatedInVerifiesAtOnce() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.withSecondNode { _, clientB in
                let key = try SigningKey.generate(.es256)
                // Node B caches the realm's key set while verifying a token of the first key.
                let first = try await client.demoToken(server, key: key)
                let beforeRotation = try await clientB.whoami(authorization: ["DPoP " + first], proofs: [try server.resourceProof(key, token: first)])
                XCTAssertEqual(beforeRotation.status, .ok)

                let found = try await server.runtime.oauth.realms.realm(named: "demo")
                let realm = try XCTUnwrap(found)
                let rotated = try await server.runtime.oauth.keys.rotate(realm: realm)
                let second = try await client.demoToken(server, key: key)
                XCTAssertEqual(try JWS.parse(second).header["kid"]?.stringValue, rotated.kid)
                let afterRotation = try await clientB.whoami(authorization: ["DPoP " + second], proofs: [try server.resourceProof(key, token: second)])
                XCTAssertEqual(afterRotation.status, .ok, "node B refused a token of the key node A rotated in")
            }
        }
    }

    /// Tokens with made-up kids are unauthenticated input: they reload a realm's keys at most once per interval.
    func testMadeUpKidsReloadTheKeySetAtMostOncePerInterval() async throws {
        try await TestServer.forEachEngine { server, _ in
            let store = CountingSigningKeyStore(server.runtime.oauth.signingKeyStore)
            let keys = RealmKeyService(store: store, masterKey: .generate(), clock: server.clock)
            let published = try await keys.publishedKeys(realm: "demo", toVerify: nil)
            let kid = try XCTUnwrap(published.keys.first?.kid)
            _ = try await keys.publishedKeys(realm: "demo", toVerify: kid)
            XCTAssertEqual(store.reads, 1, "a known kid is served from the cache")
            for attempt in 0..<100 {
                _ = try await keys.publishedKeys(realm: "demo", toVerify: "made-up-\(attempt)")
            }
            XCTAssertEqual(store.reads, 2, "100 unknown kids, one reload")
            server.clock.advance(by: RealmKeyService.unknownKidReloadInterval)
            _ = try await keys.publishedKeys(realm: "demo", toVerify: "made-up-later")
            XCTAssertEqual(store.reads, 3)
        }
    }
}

/// The realm's real key store, counting how often the published keys are read.
private final class CountingSigningKeyStore: SigningKeyStore {
    private let inner: any SigningKeyStore
    private let count = Mutex(0)
    var reads: Int { count.withLock { $0 } }

    init(_ inner: any SigningKeyStore) { self.inner = inner }

    func publishedKeys(realm: String, now: Date) async throws -> [StoredSigningKey] {
        count.withLock { $0 += 1 }
        return try await inner.publishedKeys(realm: realm, now: now)
    }

    func insertKey(_ key: StoredSigningKey) async throws { try await inner.insertKey(key) }
    func activeKey(realm: String) async throws -> StoredSigningKey? { try await inner.activeKey(realm: realm) }
    func rotate(realm: String, newKey: StoredSigningKey, retiredPublishUntil: Date) async throws {
        try await inner.rotate(realm: realm, newKey: newKey, retiredPublishUntil: retiredPublishUntil)
    }
    func deleteUnpublishedKeys(now: Date) async throws -> Int { try await inner.deleteUnpublishedKeys(now: now) }
}
