// Tests: push-MFA devices: key rotation, push provider updates, racing approvals, and the realm's device settings.
import Foundation
import HTTPTypes
import KeywardJOSE
@testable import KeywardServer
import Synchronization
import XCTest

final class DeviceManagementTests: XCTestCase {
    /// Every login reads the realm's settings and the user's devices in one statement; either may be missing.
    func testSettingsAndDevicesAreReadTogether() async throws {
        try await TestServer.forEachEngine { server, client in
            let store = server.runtime.pushMFA.service.credentials
            let user = try await server.demoUser()
            try await server.runtime.database.sql.raw("DELETE FROM push_mfa_settings WHERE realm = 'demo'").run()
            var read = try await store.settingsAndCredentials(realm: "demo", userId: user.id)
            XCTAssertNil(read.settings)
            XCTAssertEqual(read.credentials.count, 0)

            try await server.settings { $0.maxPendingChallenges = 3 }
            read = try await store.settingsAndCredentials(realm: "demo", userId: user.id)
            XCTAssertEqual(read.settings?.maxPendingChallenges, 3)
            XCTAssertEqual(read.credentials.count, 0)

            let (first, _) = try await server.enrolledDevice(client)
            server.clock.advance(by: 1)
            let (second, _) = try await server.enrolledDevice(client, algorithm: .es256)
            read = try await store.settingsAndCredentials(realm: "demo", userId: user.id)
            XCTAssertEqual(read.settings?.maxPendingChallenges, 3)
            XCTAssertEqual(read.credentials.map(\.deviceId), [first.deviceId, second.deviceId], "oldest first")
            let listed = try await store.credentials(realm: "demo", userId: user.id)
            XCTAssertEqual(read.credentials.map(\.id), listed.map(\.id))

            try await server.runtime.database.sql.raw("DELETE FROM push_mfa_settings WHERE realm = 'demo'").run()
            read = try await store.settingsAndCredentials(realm: "demo", userId: user.id)
            XCTAssertNil(read.settings)
            XCTAssertEqual(read.credentials.count, 2)
            let stranger = try await store.settingsAndCredentials(realm: "demo", userId: "nobody")
            XCTAssertEqual(stranger.credentials.count, 0)
        }
    }

    /// The original's rotation: proof with the old key, then a new token with the new key, then approvals with it.
    func testRotationThenApprovalWithTheNewKey() async throws {
        try await TestServer.forEachEngine { server, client in
            var (device, oldToken) = try await server.enrolledDevice(client)
            let newKey = try SigningKey.generate(.es384)
            var jwk = newKey.publicJWK.requiredMembers
            jwk["alg"] = "ES384"
            let rotated = try await device.call(client, .put, "/device/rotate-key", token: oldToken, json: ["publicKeyJwk": .object(jwk)])
            XCTAssertEqual(rotated.status, .ok, rotated.body)
            XCTAssertEqual(rotated.json, ["status": "rotated"])

            // The old token is bound to the old key: refused now.
            let stale = try await device.pending(client, token: oldToken)
            XCTAssertEqual(stale.status, .forbidden)
            XCTAssertEqual(stale.error, "Access token DPoP binding mismatch")

            device.key = newKey
            let newToken = try await device.accessToken(client)
            let (challenge, _) = try await server.createdChallenge()
            let approved = try await device.respond(client, token: newToken, challengeId: challenge.id)
            XCTAssertEqual(approved.status, .ok, approved.body)
            let events = try await server.runtime.audit.events(realm: "demo")
            XCTAssertTrue(events.contains { $0.type == .keyRotated })
        }
    }

    /// Keyward's extension: when the client proves possession of the new key, the proof is checked.
    func testRotationProofOfPossession() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let newKey = try SigningKey.generate(.es256)
            var jwk = newKey.publicJWK.requiredMembers
            jwk["alg"] = "ES256"
            func proof(signedBy key: SigningKey, previousJkt: String) throws -> String {
                try JWS.sign(header: ["typ": .string(RotationProof.type)], claims: [
                    "sub": .string(device.userId), "deviceId": .string(device.deviceId), "previousJkt": .string(previousJkt),
                    "iat": .number(server.clock.now().timeIntervalSince1970.rounded(.down)), "jti": .string(UUID().uuidString),
                ], key: key)
            }
            let oldJkt = device.key.publicJWK.thumbprint()
            let forged = try await device.call(client, .put, "/device/rotate-key", token: token, json: [
                "publicKeyJwk": .object(jwk), "proofOfPossession": .string(try proof(signedBy: try SigningKey.generate(.es256), previousJkt: oldJkt)),
            ])
            XCTAssertEqual(forged.status, .badRequest)
            XCTAssertTrue(forged.error?.hasPrefix("Invalid proofOfPossession") ?? false, forged.body)
            let wrongDevice = try await device.call(client, .put, "/device/rotate-key", token: token, json: [
                "publicKeyJwk": .object(jwk), "proofOfPossession": .string(try proof(signedBy: newKey, previousJkt: "someone-else")),
            ])
            XCTAssertEqual(wrongDevice.status, .forbidden)
            let good = try await device.call(client, .put, "/device/rotate-key", token: token, json: [
                "publicKeyJwk": .object(jwk), "proofOfPossession": .string(try proof(signedBy: newKey, previousJkt: oldJkt)),
            ])
            XCTAssertEqual(good.status, .ok, good.body)
            let events = try await server.runtime.audit.events(realm: "demo")
            XCTAssertEqual(events.filter { $0.type == .keyRotationDenied }.count, 2)
        }
    }

    func testRotationRefusals() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let ec = try SigningKey.generate(.es256).publicJWK.requiredMembers
            let rsa = try SigningKey.generate(.rs256).publicJWK.requiredMembers
            func rotate(_ body: JSONObject) async throws -> PushAnswer {
                try await device.call(client, .put, "/device/rotate-key", token: token, json: body)
            }
            var cases: [(JSONObject, HTTPResponse.Status, String)] = [
                ([:], .badRequest, "Missing field: publicKeyJwk"),
                (["publicKeyJwk": "text"], .badRequest, "publicKeyJwk must be a JSON object"),
                (["publicKeyJwk": .object(ec)], .badRequest, "JWK missing alg"),
                (["publicKeyJwk": .object(ec.merging(["alg": "ES384"]) { $1 })], .badRequest, "JWK algorithm mismatch"),
                (["publicKeyJwk": .object(ec.merging(["alg": "EdDSA"]) { $1 })], .badRequest, "Unsupported key algorithm: EdDSA"),
                (["publicKeyJwk": .object(rsa.merging(["alg": "PS256"]) { $1 })], .badRequest, "Unsupported key algorithm: PS256"),
                (["publicKeyJwk": .object(rsa.merging(["alg": "ES256"]) { $1 })], .badRequest, "JWK algorithm mismatch"),
                (["publicKeyJwk": .object(ec.merging(["alg": "ES256", "d": "AAAA"]) { $1 })], .badRequest, "JWK must not contain private key parameters"),
            ]
            cases.append((["publicKeyJwk": .object(ec.merging(["alg": "ES256", "x5c": .string(String(repeating: "A", count: 9000))]) { $1 })], .badRequest, "Field too long: publicKeyJwk"))
            for (body, status, message) in cases {
                let answer = try await rotate(body)
                XCTAssertEqual(answer.status, status, message)
                XCTAssertEqual(answer.error, message)
            }
            let noBody = try await device.call(client, .put, "/device/rotate-key", token: token)
            XCTAssertEqual(noBody.error, "Request body required")
            let events = try await server.runtime.audit.events(realm: "demo")
            XCTAssertEqual(events.filter { $0.type == .keyRotationDenied }.count, cases.count + 1)
        }
    }

    func testPushProviderUpdate() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let same = try await device.call(client, .put, "/device/push-provider", token: token, json: ["pushProviderId": .string("fcm-token-" + device.deviceId), "pushProviderType": "log"])
            XCTAssertEqual(same.json, ["status": "unchanged"])
            let updated = try await device.call(client, .put, "/device/push-provider", token: token, json: ["pushProviderId": "new-token", "pushProviderType": "fcm"])
            XCTAssertEqual(updated.json, ["status": "updated"])
            let keepType = try await device.call(client, .put, "/device/push-provider", token: token, json: ["pushProviderId": "newer-token", "pushProviderType": " "])
            XCTAssertEqual(keepType.json, ["status": "updated"])
            let stored = try await server.runtime.pushMFA.service.devices(realm: "demo", userId: device.userId)
            XCTAssertEqual(stored.first?.pushProviderId, "newer-token")
            XCTAssertEqual(stored.first?.pushProviderType, "fcm")
            let missing = try await device.call(client, .put, "/device/push-provider", token: token, json: ["pushProviderType": "fcm"])
            XCTAssertEqual(missing.status, .badRequest)
            XCTAssertEqual(missing.error, "Missing field: pushProviderId")
            let tooLong = try await device.call(client, .put, "/device/push-provider", token: token, json: ["pushProviderId": .string(String(repeating: "x", count: 2049))])
            XCTAssertEqual(tooLong.error, "Field too long: pushProviderId")
            let control = try await device.call(client, .put, "/device/push-provider", token: token, json: ["pushProviderId": "a\u{1}b"])
            XCTAssertEqual(control.error, "Invalid characters in field: pushProviderId")
            let badJSON = try await device.call(client, .put, "/device/push-provider", token: token, rawBody: "{\"pushProviderId\": ")
            XCTAssertEqual(badJSON.status, .badRequest)
        }
    }

    /// Two responses race for one challenge: exactly one wins, the other gets 409.
    func testRacingApprovalsOneWinsOneConflicts() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            for round in 0..<5 {
                let (challenge, _) = try await server.createdChallenge(session: "race-\(round)")
                async let first = device.respond(client, token: token, challengeId: challenge.id)
                async let second = device.respond(client, token: token, challengeId: challenge.id, action: "deny")
                let answers = try await [first, second]
                XCTAssertEqual(answers.filter { $0.status == .ok }.count, 1, "round \(round): \(answers.map(\.body))")
                let loser = try XCTUnwrap(answers.first { $0.status != .ok })
                // The loser either lost the atomic update (409) or arrived after it (400, the original's order).
                XCTAssertTrue(
                    (loser.status == .conflict && loser.error == "Challenge is currently being resolved")
                        || (loser.status == .badRequest && loser.error == "Challenge already resolved or expired"),
                    loser.body
                )
            }
        }
    }

    /// The same race made deterministic: both responses pass every check before either resolves.
    func testRaceLoserAfterAllChecksGets409() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let (challenge, _) = try await server.createdChallenge()
            let barrier = ResolveBarrier(parties: 2)
            let service = server.runtime.pushMFA.service.replacingChallenges(with: BarrierChallengeStore(inner: server.runtime.pushMFA.challengeStore, barrier: barrier))
            let url = device.base + "/login/challenges/\(challenge.id)/respond"
            func request() throws -> DeviceAuthenticator.Request {
                DeviceAuthenticator.Request(
                    realm: Realm(name: "demo", displayName: "demo", createdAt: Date()), method: "POST", url: url,
                    authorization: ["DPoP " + token], dpopProofs: [try device.proof(method: "POST", url: url, accessToken: token)]
                )
            }
            let realm = try await server.runtime.oauth.realms.realm(named: "demo")!
            var approve = try request(); approve.realm = realm
            var deny = try request(); deny.realm = realm
            let approveBody: JSONObject = ["token": .string(try device.loginJWT(challengeId: challenge.id))]
            let denyBody: JSONObject = ["token": .string(try device.loginJWT(challengeId: challenge.id, action: "deny"))]
            let authenticator = server.runtime.pushMFA.service.authenticator
            async let a = Self.outcome { try await service.respond(challengeId: challenge.id, body: approveBody, device: try await authenticator.authenticate(approve)) }
            async let b = Self.outcome { try await service.respond(challengeId: challenge.id, body: denyBody, device: try await authenticator.authenticate(deny)) }
            let results = await [a, b]
            XCTAssertEqual(results.filter { $0 == "approved" || $0 == "denied" }.count, 1, "\(results)")
            XCTAssertEqual(results.filter { $0 == "409 Challenge is currently being resolved" }.count, 1, "\(results)")
        }
    }

    private static func outcome(_ body: () async throws -> String) async -> String {
        do {
            return try await body()
        } catch {
            return (error as? PushMFAError)?.description ?? "\(error)"
        }
    }
}

/// Holds every `resolve` until `parties` callers have arrived, so racing responses really race.
private final class ResolveBarrier: Sendable {
    private let state: Mutex<(arrived: Int, waiting: [CheckedContinuation<Void, Never>])>
    private let parties: Int

    init(parties: Int) {
        self.parties = parties
        state = Mutex((0, []))
    }

    func arrive() async {
        await withCheckedContinuation { continuation in
            let release: [CheckedContinuation<Void, Never>]? = state.withLock { state in
                state.arrived += 1
                state.waiting.append(continuation)
                guard state.arrived >= parties else { return nil }
                defer { state.waiting = [] }
                return state.waiting
            }
            release?.forEach { $0.resume() }
        }
    }
}

/// The real SQL challenge store with a barrier in front of `resolve`.
private struct BarrierChallengeStore: PushChallengeStore {
    let inner: any PushChallengeStore
    let barrier: ResolveBarrier

    func resolve(id: String, to status: PushChallenge.Status, now: Date) async throws -> ChallengeResolution {
        await barrier.arrive()
        return try await inner.resolve(id: id, to: status, now: now)
    }

    func insertChallenge(_ challenge: PushChallenge) async throws { try await inner.insertChallenge(challenge) }
    func createLoginChallenge(_ challenge: PushChallenge, maxPending: Int, now: Date) async throws -> [String]? {
        try await inner.createLoginChallenge(challenge, maxPending: maxPending, now: now)
    }
    func challenge(id: String, now: Date) async throws -> PushChallenge? { try await inner.challenge(id: id, now: now) }
    func pendingChallenges(realm: String, userId: String, kind: PushChallenge.Kind, now: Date) async throws -> [PushChallenge] {
        try await inner.pendingChallenges(realm: realm, userId: userId, kind: kind, now: now)
    }
    func recordVerificationFailure(id: String, limit: Int, now: Date) async throws -> PushChallenge? {
        try await inner.recordVerificationFailure(id: id, limit: limit, now: now)
    }
    func resolveAllPending(realm: String, userId: String, to status: PushChallenge.Status, now: Date) async throws -> [PushChallenge] {
        try await inner.resolveAllPending(realm: realm, userId: userId, to: status, now: now)
    }
    func deleteChallenge(id: String) async throws { try await inner.deleteChallenge(id: id) }
    func sweepChallenges(now: Date, deleteEndedBefore: Date) async throws -> (expired: Int, deleted: Int) {
        try await inner.sweepChallenges(now: now, deleteEndedBefore: deleteEndedBefore)
    }
    func insertEnrollmentRequest(_ request: EnrollmentRequest) async throws { try await inner.insertEnrollmentRequest(request) }
    func enrollmentRequest(handle: String, now: Date) async throws -> EnrollmentRequest? { try await inner.enrollmentRequest(handle: handle, now: now) }
    func enrollmentRequest(challengeId: String, now: Date) async throws -> EnrollmentRequest? {
        try await inner.enrollmentRequest(challengeId: challengeId, now: now)
    }
    func deleteEnrollmentRequest(handle: String) async throws { try await inner.deleteEnrollmentRequest(handle: handle) }
}

/// Settings a security review asks about: proof of possession on rotation, and a cap on devices per user.
final class DeviceSettingsTests: XCTestCase {
    func testRotationWithoutProofIsRefusedWhenTheRealmRequiresIt() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            try await server.settings { try $0.apply("requireRotationProof", "true") }
            let newKey = try SigningKey.generate(.es256)
            var jwk = newKey.publicJWK.requiredMembers
            jwk["alg"] = "ES256"
            let refused = try await device.call(client, .put, "/device/rotate-key", token: token, json: ["publicKeyJwk": .object(jwk)])
            XCTAssertEqual(refused.status, .badRequest, refused.body)
            XCTAssertEqual(refused.error, "Missing field: proofOfPossession")
            let proof = try JWS.sign(header: ["typ": .string(RotationProof.type)], claims: [
                "sub": .string(device.userId), "deviceId": .string(device.deviceId), "previousJkt": .string(device.key.publicJWK.thumbprint()),
                "iat": .number(server.clock.now().timeIntervalSince1970.rounded(.down)),
            ], key: newKey)
            let rotated = try await device.call(client, .put, "/device/rotate-key", token: token, json: [
                "publicKeyJwk": .object(jwk), "proofOfPossession": .string(proof),
            ])
            XCTAssertEqual(rotated.status, .ok, rotated.body)
        }
    }

    func testEnrollmentBeyondTheDeviceCapIsRefusedButReEnrollmentIsNot() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.settings { try $0.apply("maxDevicesPerUser", "2") }
            let user = try await server.demoUser()
            var devices: [TestDevice] = []
            for _ in 0..<2 {
                let device = try TestDevice(server: server, userId: user.id)
                let enrolled = try await device.enroll(client, enrollmentToken: try await server.startEnrollment(user).enrollmentToken)
                XCTAssertEqual(enrolled.status, .ok, enrolled.body)
                devices.append(device)
            }
            let third = try TestDevice(server: server, userId: user.id)
            let refused = try await third.enroll(client, enrollmentToken: try await server.startEnrollment(user).enrollmentToken)
            XCTAssertEqual(refused.status, .conflict, refused.body)
            XCTAssertEqual(refused.error, "Too many devices: at most 2 per user; remove one first")
            let count = try await server.runtime.pushMFA.service.devices(realm: "demo", userId: user.id).count
            XCTAssertEqual(count, 2)

            // The same device enrolling again replaces itself.
            let again = try await devices[0].enroll(client, enrollmentToken: try await server.startEnrollment(user).enrollmentToken)
            XCTAssertEqual(again.status, .ok, again.body)
        }
    }
}
