// Tests: the APNs push sender against a local HTTP/2 double: provider tokens, headers, payload, failures.
import Foundation
import KeywardJOSE
import XCTest
@testable import KeywardServer

/// APNsPushSender against tests/push-doubles/apns_double.py: HTTP/2 over TLS with a trustme CA passed as `caFile`.
final class APNsPushSenderTests: XCTestCase {
    private var double: PushDoubleProcess!
    private var sender: APNsPushSender?
    private var p8: (path: String, key: SigningKey)!
    private let clock = PushTestClock()
    private let logs = PushLogCapture()
    private let deviceToken = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"

    private var caFile: String { double.directory.appendingPathComponent("ca.pem").path }

    private func start(rules: [String] = []) throws {
        double = try PushDoubleProcess(script: "apns_double.py", rules: rules) { directory in
            ["--ca-out", directory.appendingPathComponent("ca.pem").path]
        }
        p8 = try PushTestKeys.writeP8(in: double.directory)
    }

    private func makeSender(trustingTheDouble: Bool = true) throws -> APNsPushSender {
        let settings = APNsSettings(
            url: "https://127.0.0.1:\(double.port)", teamId: "TEAM123456", keyId: "KEY987654", keyFile: p8.path,
            topic: "com.example.keyward", caFile: trustingTheDouble ? caFile : nil)
        let made = try APNsPushSender(settings: settings, logger: logs.logger(), clock: clock.function)
        sender = made
        return made
    }

    override func tearDown() async throws {
        await sender?.shutdown()
        double?.stop()
        try await super.tearDown()
    }

    private func message(to token: String? = nil, exp: Int64? = 1_800_000_240) throws -> PushMessage {
        PushTestMessages.message(pushProviderId: token ?? deviceToken, confirmToken: try PushTestMessages.confirmToken(exp: exp))
    }

    private func providerToken(of record: PushDoubleRecord) throws -> JWS {
        let authorization = try XCTUnwrap(record.header("authorization"))
        XCTAssertTrue(authorization.hasPrefix("bearer "), authorization)
        return try JWS.parse(authorization.dropFirst("bearer ".count))
    }

    func testDeliversOverHTTP2WithAProviderTokenTheHeadersAndThePayload() async throws {
        try start()
        let push = try message()
        let sender = try makeSender()
        let outcome = await sender.send(push)
        XCTAssertEqual(outcome, .delivered)

        let record = try XCTUnwrap(try double.records().first)
        XCTAssertEqual(try double.records().count, 1)
        XCTAssertEqual(record.httpVersion, "2", "APNs only speaks HTTP/2")
        XCTAssertEqual(record.method, "POST")
        XCTAssertEqual(record.path, "/3/device/\(deviceToken)")
        XCTAssertEqual(record.header("apns-topic"), "com.example.keyward")
        XCTAssertEqual(record.header("apns-push-type"), "alert")
        XCTAssertEqual(record.header("apns-priority"), "10")
        XCTAssertEqual(record.header("apns-expiration"), "1800000240", "the challenge's exp from the confirm token")
        XCTAssertEqual(record.header("apns-collapse-id"), PushTestMessages.challengeId)
        XCTAssertEqual(record.headerCount("authorization"), 1)

        let jwt = try providerToken(of: record)
        XCTAssertEqual(jwt.header, ["alg": "ES256", "kid": "KEY987654"])
        XCTAssertEqual(try jwt.claims(), ["iss": "TEAM123456", "iat": .number(clock.now.timeIntervalSince1970)])
        XCTAssertTrue(p8.key.publicJWK.verify(signature: jwt.signature, over: jwt.signingInput, algorithm: .es256),
                      "provider token must verify with the .p8's public key")

        let expected: NSDictionary = [
            "aps": ["alert": ["title": "Push MFA", "body": "Please confirm your login"], "sound": "default"],
            "token": push.confirmToken,
        ]
        XCTAssertEqual(record.jsonBody, expected)
    }

    func testTheProviderTokenIsReusedForFiftyMinutes() async throws {
        try start()
        let sender = try makeSender()
        let push = try message()
        let issuedAt = clock.now
        _ = await sender.send(push)
        clock.advance(by: 50 * 60 - 1)
        _ = await sender.send(push)
        clock.advance(by: 1)
        let last = await sender.send(push)
        XCTAssertEqual(last, .delivered)

        let tokens = try double.records().map { try XCTUnwrap($0.header("authorization")) }
        XCTAssertEqual(tokens.count, 3)
        XCTAssertEqual(tokens[0], tokens[1])
        XCTAssertNotEqual(tokens[1], tokens[2])
        let renewed = try providerToken(of: try double.records()[2]).claims()
        XCTAssertEqual(renewed["iat"], .number(issuedAt.timeIntervalSince1970 + 50 * 60))
    }

    func testGoneAndBadDeviceTokensAreUnregistered() async throws {
        try start(rules: [
            #"{"match": "/3/device/0ld", "status": 410, "body": {"reason": "Unregistered", "timestamp": 1700000000000}}"#,
            #"{"match": "/3/device/expired", "status": 410, "body": {"reason": "ExpiredToken"}}"#,
            #"{"match": "/3/device/bad", "status": 400, "body": {"reason": "BadDeviceToken"}}"#,
            #"{"match": "/3/device/othertopic", "status": 400, "body": {"reason": "DeviceTokenNotForTopic"}}"#,
        ])
        let sender = try makeSender()
        var outcomes: [PushDeliveryOutcome] = []
        for token in ["0ld", "expired", "bad", "othertopic"] {
            outcomes.append(await sender.send(try message(to: token)))
        }
        XCTAssertEqual(outcomes, [.unregistered, .unregistered, .unregistered, .failed],
                       "a token for another topic is our configuration's fault, not the device's")
    }

    func testARefusedProviderTokenIsDroppedAndReminted() async throws {
        try start(rules: [#"{"match": "/3/device/", "status": 403, "times": 1, "body": {"reason": "ExpiredProviderToken"}}"#])
        let sender = try makeSender()
        let first = await sender.send(try message())
        clock.advance(by: 60)
        let second = await sender.send(try message())
        XCTAssertEqual([first, second], [.failed, .delivered])

        let records = try double.records()
        XCTAssertEqual(records.count, 2)
        XCTAssertEqual(try providerToken(of: records[1]).claims()["iat"], .number(clock.now.timeIntervalSince1970),
                       "minted anew after the refusal instead of reused for 50 minutes")
        XCTAssertTrue(logs.entries.contains { $0.message.contains("refused the provider token") && $0.level == .error })
    }

    func testAServerErrorIsAFailureNotAThrow() async throws {
        try start(rules: [#"{"match": "/3/device/", "status": 500, "body": {"reason": "InternalServerError"}}"#])
        let sender = try makeSender()
        let outcome = await sender.send(try message())
        XCTAssertEqual(outcome, .failed)
        let failure = try XCTUnwrap(logs.entries.first { $0.message == "APNs push failed" })
        XCTAssertEqual(failure.metadata["status"]?.description, "500")
        XCTAssertEqual(failure.metadata["reason"]?.description, "InternalServerError")
    }

    func testWithoutTheCAFileTheDoubleIsNotTrusted() async throws {
        try start()
        let sender = try makeSender(trustingTheDouble: false)
        let outcome = await sender.send(try message())
        XCTAssertEqual(outcome, .failed)
        XCTAssertEqual(try double.records().count, 0, "TLS verification must stop the request before it is sent")
        XCTAssertNotNil(logs.entries.first { $0.message == "APNs push failed: APNs unreachable" })
    }

    func testAConfirmTokenWithoutExpFallsBackToFourMinutesAndLongChallengeIdsAreCut() async throws {
        try start()
        let longChallenge = String(repeating: "0123456789", count: 8)
        let push = PushTestMessages.message(
            pushProviderId: deviceToken, confirmToken: try PushTestMessages.confirmToken(challengeId: longChallenge, exp: nil),
            challengeId: longChallenge)
        let sender = try makeSender()
        let outcome = await sender.send(push)
        XCTAssertEqual(outcome, .delivered)
        let record = try XCTUnwrap(try double.records().first)
        XCTAssertEqual(record.header("apns-expiration"), String(Int(clock.now.timeIntervalSince1970) + 240))
        XCTAssertEqual(record.header("apns-collapse-id"), String(longChallenge.prefix(64)))
    }

    func testCollapseIdsAreCutOnCharacterBoundaries() {
        XCTAssertEqual(APNsRequest.collapseId(challengeId: String(repeating: "ü", count: 40)), String(repeating: "ü", count: 32))
        XCTAssertEqual(APNsRequest.collapseId(challengeId: "a" + String(repeating: "ü", count: 40)),
                       "a" + String(repeating: "ü", count: 31), "63 bytes: a 65th byte would split a character")
        XCTAssertEqual(APNsRequest.collapseId(challengeId: "short"), "short")
    }

    func testANonHexDeviceTokenCannotReshapeThePath() {
        XCTAssertEqual(APNsRequest.path(deviceToken: "../../x?y"), "/3/device/..%2F..%2Fx%3Fy")
    }
}
