// Tests: push-MFA login challenges: listing, number match and PIN, expiry, resend, caps, lockout and the sweeper.
import Foundation
import HTTPTypes
import KeywardJOSE
import KeywardWire
@testable import KeywardServer
import XCTest

final class LoginChallengeTests: XCTestCase {
    func testPendingListsTheChallengeWithTheReferenceFields() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.settings { $0.userVerification = .numberMatch }
            let (device, token) = try await server.enrolledDevice(client)
            let (challenge, _) = try await server.createdChallenge()
            let pending = try await device.pending(client, token: token)
            XCTAssertEqual(pending.status, .ok, pending.body)
            let list = try JSONDecoder().decode(PendingChallengesResponse.self, from: Data(pending.body.utf8))
            XCTAssertEqual(list.challenges.count, 1)
            let item = try XCTUnwrap(list.challenges.first)
            XCTAssertEqual(item.cid, challenge.id)
            XCTAssertEqual(item.userId, device.userId)
            XCTAssertEqual(item.username, "test")
            XCTAssertEqual(item.clientId, "test-app")
            // The list reads the times back from the database, which keeps whole milliseconds.
            let stored = { (date: Date) in Int64(StorageTime.asStored(date).timeIntervalSince1970) }
            XCTAssertEqual(item.expiresAt, stored(challenge.expiresAt))
            XCTAssertEqual(item.createdAt, stored(challenge.createdAt))
            XCTAssertEqual(item.userVerification?.type, "number-match")
            let numbers = try XCTUnwrap(item.userVerification?.numbers)
            XCTAssertEqual(Set(numbers).count, 3)
            XCTAssertTrue(numbers.allSatisfy { text in Int(text).map { (0...99).contains($0) && String($0) == text } ?? false })
            XCTAssertTrue(numbers.contains(try XCTUnwrap(challenge.userVerification.expectedValue)))
            XCTAssertNil(pending.json["challenges"]?.arrayValue?.first?.objectValue?["clientName"], "null members are left out")

            // Another user id in the query: an empty list, not an error.
            let other = try await device.call(client, .get, "/login/pending?userId=someone-else", token: token)
            XCTAssertEqual(other.status, .ok)
            XCTAssertEqual(other.json, ["challenges": .array([])])
        }
    }

    /// Three numbers are shown and a phished user could tap each in turn: the first wrong number denies the
    /// challenge, as Okta Verify and Duo do.
    func testNumberMatchFirstWrongAnswerDeniesTheChallenge() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.settings { $0.userVerification = .numberMatch }
            let (device, token) = try await server.enrolledDevice(client)
            let (challenge, _) = try await server.createdChallenge()
            guard case .numberMatch(let expected, let options) = challenge.userVerification else { return XCTFail("no number match") }
            let wrong = try XCTUnwrap(options.first { $0 != expected })
            let answer = try await device.respond(client, token: token, challengeId: challenge.id, userVerification: .string(wrong))
            XCTAssertEqual(answer.status, .forbidden)
            XCTAssertEqual(answer.error, "User verification mismatch")
            let denied = try await server.runtime.pushMFA.service.challenge(id: challenge.id)
            XCTAssertEqual(denied?.status, .denied)
            let late = try await device.respond(client, token: token, challengeId: challenge.id, userVerification: .string(expected))
            XCTAssertEqual(late.status, .badRequest)
            XCTAssertEqual(late.error, "Challenge already resolved or expired")
        }
    }

    /// A PIN cannot be guessed by tapping: it keeps three tries, and the third wrong one denies.
    func testPinWrongAnswersCountAndTheThirdDenies() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.settings { $0.userVerification = .pin }
            let (device, token) = try await server.enrolledDevice(client)
            let (challenge, _) = try await server.createdChallenge()
            let pin = try XCTUnwrap(challenge.userVerification.expectedValue)
            let wrong = pin == "0000" ? "1111" : "0000"
            for attempt in 1...2 {
                let answer = try await device.respond(client, token: token, challengeId: challenge.id, userVerification: .string(wrong))
                XCTAssertEqual(answer.status, .forbidden, "attempt \(attempt)")
                XCTAssertEqual(answer.error, "User verification mismatch")
            }
            let stillPending = try await server.runtime.pushMFA.service.challenge(id: challenge.id)
            XCTAssertEqual(stillPending?.status, .pending)
            let third = try await device.respond(client, token: token, challengeId: challenge.id, userVerification: .string(wrong))
            XCTAssertEqual(third.error, "User verification mismatch")
            let denied = try await server.runtime.pushMFA.service.challenge(id: challenge.id)
            XCTAssertEqual(denied?.status, .denied)
            let late = try await device.respond(client, token: token, challengeId: challenge.id, userVerification: .string(pin))
            XCTAssertEqual(late.error, "Challenge already resolved or expired")
        }
    }

    func testNumberMatchRightAnswerApprovesAndRefusalsForMissingOrNonStringAnswers() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.settings { $0.userVerification = .numberMatch }
            let (device, token) = try await server.enrolledDevice(client)
            let (challenge, _) = try await server.createdChallenge()
            let expected = try XCTUnwrap(challenge.userVerification.expectedValue)
            let missing = try await device.respond(client, token: token, challengeId: challenge.id)
            XCTAssertEqual(missing.status, .badRequest)
            XCTAssertEqual(missing.error, "Missing user verification")
            let blank = try await device.respond(client, token: token, challengeId: challenge.id, userVerification: "  ")
            XCTAssertEqual(blank.error, "Missing user verification")
            let number = try await device.respond(client, token: token, challengeId: challenge.id, userVerification: .number(Double(expected)!))
            XCTAssertEqual(number.status, .badRequest)
            XCTAssertEqual(number.error, "Invalid user verification value")
            let right = try await device.respond(client, token: token, challengeId: challenge.id, userVerification: .string(" \(expected) "))
            XCTAssertEqual(right.status, .ok, right.body)
            XCTAssertEqual(right.json, ["status": "approved"])
        }
    }

    func testPinModeDefaultsToFourDigitsAndCanBeTwelve() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.settings { $0.userVerification = .pin }
            let (device, token) = try await server.enrolledDevice(client)
            let (challenge, _) = try await server.createdChallenge()
            guard case .pin(let pin) = challenge.userVerification else { return XCTFail("no pin") }
            XCTAssertEqual(pin.count, 4)
            XCTAssertTrue(pin.allSatisfy(\.isNumber))
            let pending = try await device.pending(client, token: token)
            XCTAssertEqual(pending.json["challenges"]?.arrayValue?.first?.objectValue?["userVerification"], .object(["type": "pin", "pinLength": 4]))
            let approved = try await device.respond(client, token: token, challengeId: challenge.id, userVerification: .string(pin))
            XCTAssertEqual(approved.status, .ok, approved.body)

            try await server.settings { $0.userVerificationPinLength = 12 }
            let (long, _) = try await server.createdChallenge(session: "browser-2")
            XCTAssertEqual(long.userVerification.expectedValue?.count, 12)
            XCTAssertThrowsError(try PushMFASettings().applying("userVerificationPinLength", "13"))
        }
    }

    func testDenyNeedsNoUserVerification() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.settings { $0.userVerification = .pin }
            let (device, token) = try await server.enrolledDevice(client)
            let (challenge, _) = try await server.createdChallenge()
            let denied = try await device.respond(client, token: token, challengeId: challenge.id, action: "DENY")
            XCTAssertEqual(denied.status, .ok, denied.body)
            XCTAssertEqual(denied.json, ["status": "denied"])
            let stored = try await server.runtime.pushMFA.service.challenge(id: challenge.id)
            XCTAssertEqual(stored?.status, .denied)
        }
    }

    func testMissingActionMeansApprove() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let (challenge, _) = try await server.createdChallenge()
            let answer = try await device.respond(client, token: token, challengeId: challenge.id, action: nil)
            XCTAssertEqual(answer.json, ["status": "approved"])
        }
    }

    func testExpiryIsWrittenLazilyAndRefusesLateAnswers() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let (challenge, _) = try await server.createdChallenge()
            XCTAssertEqual(challenge.expiresAt.timeIntervalSince(challenge.createdAt), 240)
            server.clock.advance(by: 241)
            let freshToken = try await device.accessToken(client)
            _ = token
            let late = try await device.respond(client, token: freshToken, challengeId: challenge.id)
            XCTAssertEqual(late.status, .badRequest)
            XCTAssertEqual(late.error, "Challenge already resolved or expired")
            let stored = try await server.runtime.pushMFA.service.challenge(id: challenge.id)
            XCTAssertEqual(stored?.status, .expired)
            let pending = try await device.pending(client, token: freshToken)
            XCTAssertEqual(pending.json, ["challenges": .array([])])
        }
    }

    func testResendReplacesTheSessionsChallengeAndOtherSessionsAreCapped() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let (first, _) = try await server.createdChallenge(session: "browser-1")
            let (second, _) = try await server.createdChallenge(session: "browser-1")
            XCTAssertNotEqual(first.id, second.id)
            let gone = try await server.runtime.pushMFA.service.challenge(id: first.id)
            XCTAssertNil(gone, "resend deletes the replaced challenge")
            let pending = try await device.pending(client, token: token)
            XCTAssertEqual(pending.json["challenges"]?.arrayValue?.compactMap { $0.objectValue?["cid"]?.stringValue }, [second.id])

            guard case .tooManyPending = try await server.startLogin(session: "browser-2") else { return XCTFail("a second session must be capped") }
            try await server.settings { $0.maxPendingChallenges = 2 }
            guard case .created = try await server.startLogin(session: "browser-2") else { return XCTFail("two pending allowed now") }
        }
    }

    func testConcurrentLoginsFromManyBrowsersCreateNoMoreThanTheLimit() async throws {
        try await TestServer.forEachEngine { server, client in
            _ = try await server.enrolledDevice(client)
            for limit in [1, 3] {
                try await server.settings { $0.maxPendingChallenges = limit }
                let created = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for browser in 0..<12 {
                        group.addTask {
                            if case .created = try await server.startLogin(session: "limit-\(limit)-browser-\(browser)") { return true }
                            return false
                        }
                    }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                XCTAssertEqual(created, limit, "maxPendingChallenges=\(limit)")
                let user = try await server.demoUser()
                let pending = try await server.runtime.pushMFA.challengeStore.pendingChallenges(realm: "demo", userId: user.id, kind: .authentication, now: server.clock.now())
                XCTAssertEqual(pending.count, limit)
                _ = try await server.runtime.pushMFA.challengeStore.resolveAllPending(realm: "demo", userId: user.id, to: .denied, now: server.clock.now())
            }
        }
    }

    func testCancelDeniesWithoutTheDevice() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let (challenge, _) = try await server.createdChallenge(session: "browser-1")
            try await server.runtime.pushMFA.service.cancelLogin(challengeId: challenge.id, sessionId: "another-session")
            let untouched = try await server.runtime.pushMFA.service.challenge(id: challenge.id)
            XCTAssertEqual(untouched?.status, .pending, "only the session that created it can cancel it")
            try await server.runtime.pushMFA.service.cancelLogin(challengeId: challenge.id, sessionId: "browser-1")
            let cancelled = try await server.runtime.pushMFA.service.challenge(id: challenge.id)
            XCTAssertEqual(cancelled?.status, .denied)
            let answer = try await device.respond(client, token: token, challengeId: challenge.id)
            XCTAssertEqual(answer.status, .badRequest)
        }
    }

    func testLockoutDisablesTheUserAndEndsPendingChallenges() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.settings { $0.maxPendingChallenges = 3 }
            let (device, token) = try await server.enrolledDevice(client)
            let (first, _) = try await server.createdChallenge(session: "browser-1")
            let (second, _) = try await server.createdChallenge(session: "browser-2")
            let answer = try await device.call(client, .post, "/login/lockout", token: token)
            XCTAssertEqual(answer.status, .ok, answer.body)
            XCTAssertEqual(answer.json, ["status": "locked_out"])
            for id in [first.id, second.id] {
                let stored = try await server.runtime.pushMFA.service.challenge(id: id)
                XCTAssertEqual(stored?.status, .userLockedOut)
            }
            let user = try await server.demoUser()
            XCTAssertFalse(user.enabled)
            let login = try await server.runtime.accounts.users.authenticate(realm: "demo", username: "test", password: "test")
            XCTAssertEqual(login, .disabled(user))
            let events = try await server.runtime.audit.events(realm: "demo", userId: user.id)
            XCTAssertTrue(events.contains { $0.type == .userLockedOut })
        }
    }

    func testEveryDeviceGetsTheChallengeByDefaultAndOnlyTheNewestWhenConfigured() async throws {
        try await TestServer.forEachEngine { server, client in
            let (older, olderToken) = try await server.enrolledDevice(client)
            server.clock.advance(by: 1)
            let (newer, newerToken) = try await server.enrolledDevice(client, algorithm: .es256)
            let (challenge, _) = try await server.createdChallenge()
            XCTAssertNil(challenge.credentialId)
            for (device, token) in [(older, olderToken), (newer, newerToken)] {
                let pending = try await device.pending(client, token: token)
                XCTAssertEqual(pending.json["challenges"]?.arrayValue?.count, 1)
            }
            let approved = try await older.respond(client, token: olderToken, challengeId: challenge.id)
            XCTAssertEqual(approved.status, .ok, approved.body)

            try await server.settings { $0.loginDevices = .newest }
            let (bound, _) = try await server.createdChallenge(session: "browser-2")
            let olderPending = try await older.pending(client, token: olderToken)
            XCTAssertEqual(olderPending.json, ["challenges": .array([])])
            let wrongDevice = try await older.respond(client, token: olderToken, challengeId: bound.id)
            XCTAssertEqual(wrongDevice.status, .forbidden)
            XCTAssertEqual(wrongDevice.error, "Authentication token device mismatch")
            let right = try await newer.respond(client, token: newerToken, challengeId: bound.id)
            XCTAssertEqual(right.status, .ok, right.body)
        }
    }

    func testWaitChallengeDoublesAndResetsOnApproval() async throws {
        try await TestServer.forEachEngine { server, client in
            try await server.settings { $0.waitChallengeEnabled = true }
            let (device, token) = try await server.enrolledDevice(client)
            let (first, _) = try await server.createdChallenge(session: "browser-1")
            _ = try await device.respond(client, token: token, challengeId: first.id, action: "deny")
            guard case .waitRequired(let wait) = try await server.startLogin(session: "browser-1") else { return XCTFail("wait expected") }
            XCTAssertEqual(wait, 10)
            server.clock.advance(by: 10)
            let (second, _) = try await server.createdChallenge(session: "browser-1")
            _ = try await device.respond(client, token: try await device.accessToken(client), challengeId: second.id, action: "deny")
            guard case .waitRequired(let doubled) = try await server.startLogin(session: "browser-1") else { return XCTFail("wait expected") }
            XCTAssertEqual(doubled, 20, "denials do not reset the counter")
            server.clock.advance(by: 20)
            let (third, _) = try await server.createdChallenge(session: "browser-1")
            let approved = try await device.respond(client, token: try await device.accessToken(client), challengeId: third.id)
            XCTAssertEqual(approved.status, .ok, approved.body)
            guard case .created = try await server.startLogin(session: "browser-1") else { return XCTFail("approval resets the wait") }
        }
    }

    func testSweeperExpiresAndLaterForgetsChallenges() async throws {
        try await TestServer.forEachEngine { server, client in
            _ = try await server.enrolledDevice(client)
            let (challenge, _) = try await server.createdChallenge()
            let sweeper = ExpiredRowSweeper(
                sweeps: [.singleUse(server.runtime.singleUse), .signingKeys(server.runtime.oauth.signingKeyStore), .pushChallenges(server.runtime.pushMFA.challengeStore)],
                clock: server.clock, logger: .init(label: "test")
            )
            server.clock.advance(by: 241)
            let first = try await sweeper.sweepOnce()
            XCTAssertEqual(first.expiredChallenges, 1, "only the pending login challenge expires; the enrollment was approved")
            server.clock.advance(by: ExpiredRowSweep.finishedChallengeRetention)
            let second = try await sweeper.sweepOnce()
            XCTAssertEqual(second.expiredChallenges, 0)
            XCTAssertGreaterThanOrEqual(second.deletedChallenges, 2)
            let gone = try await server.runtime.pushMFA.service.challenge(id: challenge.id)
            XCTAssertNil(gone)
        }
    }

    func testConfirmTokenClaims() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, _) = try await server.enrolledDevice(client)
            guard case .created(let challenge, _, let sameDeviceLink, let confirmToken) = try await server.startLogin() else { return XCTFail() }
            let jws = try JWS.parse(confirmToken)
            XCTAssertEqual(jws.header["typ"], "JWT")
            let claims = try jws.claims()
            XCTAssertEqual(Set(claims.keys), ["iss", "credId", "typ", "ver", "cid", "iat", "exp"])
            XCTAssertEqual(claims["typ"], .number(1))
            XCTAssertEqual(claims["ver"], .number(1))
            XCTAssertEqual(claims["credId"]?.stringValue, device.credentialId)
            XCTAssertEqual(claims["cid"]?.stringValue, challenge.id)
            XCTAssertTrue(sameDeviceLink.hasPrefix("my-secure://confirm?token="))
            let sameDeviceClaims = try JWS.parse(String(sameDeviceLink.dropFirst("my-secure://confirm?token=".count))).claims()
            XCTAssertEqual(sameDeviceClaims, claims, "without the answer the same-device token says what the push says")

            // Only the same-device variant carries the answer, and only when the realm asks for it.
            try await server.settings { $0.userVerification = .numberMatch; $0.sameDeviceIncludeUserVerification = true }
            guard case .created(let answered, _, let answerLink, let pushed) = try await server.startLogin() else { return XCTFail() }
            XCTAssertNil(try JWS.parse(pushed).claims()["userVerification"])
            let answerClaims = try JWS.parse(String(answerLink.dropFirst("my-secure://confirm?token=".count))).claims()
            XCTAssertEqual(answerClaims["userVerification"]?.stringValue, answered.userVerification.expectedValue)
            XCTAssertEqual(answerClaims["cid"]?.stringValue, answered.id)
        }
    }
}

extension PushMFASettings {
    func applying(_ key: String, _ value: String) throws -> PushMFASettings {
        var copy = self
        try copy.apply(key, value)
        return copy
    }
}
