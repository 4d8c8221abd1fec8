// Tests: KeywardKit's PushMFAClient against a live Keyward: enroll, approve, rotate, push provider, lockout.
import Foundation
import KeywardJOSE
import KeywardKit
import KeywardServer
import KeywardWire
import XCTest

/// KeywardKit's PushMFAClient against a real Keyward on a loopback port: every key type enrolls, approves with the
/// number shown, rotates, updates its push provider and locks out.
final class PushMFAClientTests: XCTestCase {
    func testEveryKeyTypeEnrollsAndApproves() async throws {
        try await LiveServer.run { baseURL, runtime in
            let issuer = baseURL + "/realms/demo"
            var settings = try await runtime.pushMFA.service.settings(realm: "demo")
            settings.userVerification = .numberMatch
            settings.maxPendingChallenges = 10
            try await runtime.pushMFA.service.saveSettings(settings, realm: "demo")
            let found = try await runtime.accounts.users.user(realm: "demo", username: "test")
            let user = try XCTUnwrap(found)
            for (index, spec) in try [DeviceKeySpec(algorithm: .rs256), DeviceKeySpec(algorithm: .es256), DeviceKeySpec(algorithm: .es384), DeviceKeySpec(algorithm: .es512)].enumerated() {
                let start = try await runtime.pushMFA.service.startEnrollment(realm: "demo", user: user)
                var options = PushMFAClient.EnrollmentOptions()
                options.useDPoP = index % 2 == 0
                let device = try await PushMFAClient.enroll(
                    link: try EnrollmentLink.parse(start.link), issuer: issuer, clientId: "push-device-client", clientSecret: "device-client-secret",
                    key: try SigningKey.generate(spec.algorithm), options: options
                )
                XCTAssertEqual(device.key.algorithm, spec.algorithm)
                guard case .created(let challenge, _, _, _) = try await runtime.pushMFA.service.startLogin(realm: try await runtime.oauth.realms.realm(named: "demo")!, user: user, clientId: "web", sessionId: "s\(index)") else {
                    return XCTFail("no challenge")
                }
                let pending = try await device.pendingChallenges()
                let mine = try XCTUnwrap(pending.first { $0.cid == challenge.id })
                XCTAssertEqual(mine.userVerification?.type, "number-match")
                let status = try await device.respond(challengeId: challenge.id, action: .approve, userVerification: challenge.userVerification.expectedValue)
                XCTAssertEqual(status, "approved")
            }
        }
    }

    func testRotationPushProviderLockoutAndRefusedTokens() async throws {
        try await LiveServer.run { baseURL, runtime in
            let issuer = baseURL + "/realms/demo"
            let found = try await runtime.accounts.users.user(realm: "demo", username: "test")
            let user = try XCTUnwrap(found)
            let start = try await runtime.pushMFA.service.startEnrollment(realm: "demo", user: user)

            // A token checked against another realm's issuer and keys is refused before anything is sent.
            _ = try await runtime.oauth.realms.createRealm(name: "other")
            do {
                _ = try await PushMFAClient.enroll(
                    link: .token(start.enrollmentToken), issuer: baseURL + "/realms/other", clientId: "push-device-client",
                    clientSecret: "device-client-secret", key: try SigningKey.generate(.es256)
                )
                XCTFail("accepted a token for another issuer")
            } catch let error as KeywardKitError {
                guard case .untrustedToken = error else { return XCTFail("\(error)") }
            }

            // The device's keys live in a FileKeyStore, and rotation goes through it: staged, proved, promoted.
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-e2e-keys-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let store = FileKeyStore(directory: directory)
            let device = try await PushMFAClient.enroll(
                link: .token(start.enrollmentToken), issuer: issuer, clientId: "push-device-client", clientSecret: "device-client-secret",
                key: try store.createKey(named: "push-mfa", algorithm: .rs256)
            )
            let rotated = try await device.rotateKey(to: try DeviceKeySpec(algorithm: .es256), in: store, keyName: "push-mfa", nextKeyName: "push-mfa-next")
            XCTAssertEqual(try store.key(named: "push-mfa")?.publicJWK.thumbprint(), rotated.key.publicJWK.thumbprint())
            XCTAssertNil(try store.key(named: "push-mfa-next"))
            guard case .created(let challenge, _, _, let confirmToken) = try await runtime.pushMFA.service.startLogin(realm: try await runtime.oauth.realms.realm(named: "demo")!, user: user, clientId: nil, sessionId: "s") else {
                return XCTFail("no challenge")
            }
            let cid = try await rotated.challengeId(fromConfirmToken: confirmToken)
            XCTAssertEqual(cid, challenge.id)
            let status = try await rotated.respond(challengeId: cid, action: .deny)
            XCTAssertEqual(status, "denied")
            do {
                _ = try await device.pendingChallenges()
                XCTFail("the old key still works after rotation")
            } catch let error as KeywardKitError {
                XCTAssertEqual(error, .server(status: 403, code: nil, description: "Access token DPoP binding mismatch"))
            }
            let updated = try await rotated.updatePushProvider(id: "fcm-token", type: "fcm")
            XCTAssertEqual(updated, "updated")
            try await rotated.lockout()
            let locked = try await runtime.accounts.users.user(realm: "demo", username: "test")
            XCTAssertEqual(locked?.enabled, false)
        }
    }
}
