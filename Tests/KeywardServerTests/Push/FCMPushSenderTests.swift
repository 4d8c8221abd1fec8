// Tests: the FCM push sender against a local double: access tokens, delivery, failures, and an outbound proxy.
import Foundation
import KeywardJOSE
import Logging
import XCTest
@testable import KeywardServer

/// FCMPushSender against tests/push-doubles/fcm_double.py (a token endpoint and messages:send over HTTP).
final class FCMPushSenderTests: XCTestCase {
    private var double: PushDoubleProcess!
    private var account: PushTestKeys.ServiceAccount!
    private let clock = PushTestClock()
    private let logs = PushLogCapture()

    private func start(rules: [String] = [], arguments: [String] = []) throws {
        double = try PushDoubleProcess(script: "fcm_double.py", rules: rules, arguments: { _ in arguments })
        account = try PushTestKeys.writeServiceAccount(in: double.directory, tokenURI: double.baseURL + "/token")
    }

    override func tearDown() {
        double?.stop()
        super.tearDown()
    }

    private let messagesPath = "/v1/projects/keyward-test/messages:send"
    private var messagesURL: String { double.baseURL + messagesPath }

    private func makeSender(title: String = "Push MFA", body: String = "Please confirm your login") throws -> FCMPushSender {
        try FCMPushSender(
            settings: FCMSettings(url: messagesURL, serviceAccountFile: account.path, title: title, body: body),
            logger: logs.logger(), clock: clock.function)
    }

    private func requests(to path: String) throws -> [PushDoubleRecord] {
        try double.records().filter { $0.path == path }
    }

    func testDeliversTheMessageWithAnAccessTokenFromASignedAssertion() async throws {
        try start()
        let confirmToken = try PushTestMessages.confirmToken(exp: 1_800_000_240)
        let sender = try makeSender(title: "Anmeldung", body: "Bitte bestätigen")
        let outcome = await sender.send(
            PushTestMessages.message(pushProviderId: "fcm-registration-token-1", confirmToken: confirmToken))
        XCTAssertEqual(outcome, .delivered)

        let records = try double.records()
        XCTAssertEqual(records.map(\.path), ["/token", "/v1/projects/keyward-test/messages:send"])

        let tokenRequest = records[0]
        XCTAssertEqual(tokenRequest.method, "POST")
        XCTAssertEqual(tokenRequest.header("content-type"), "application/x-www-form-urlencoded")
        let form = tokenRequest.formFields
        XCTAssertEqual(form["grant_type"], "urn:ietf:params:oauth:grant-type:jwt-bearer")
        XCTAssertEqual(Set(form.keys), ["grant_type", "assertion"])
        let assertion = try JWS.parse(XCTUnwrap(form["assertion"]))
        XCTAssertEqual(assertion.header, ["alg": "RS256", "typ": "JWT", "kid": .string(account.privateKeyId)])
        XCTAssertTrue(account.key.publicJWK.verify(signature: assertion.signature, over: assertion.signingInput, algorithm: .rs256),
                      "assertion must verify with the service account's public key")
        let iat = clock.now.timeIntervalSince1970
        XCTAssertEqual(try assertion.claims(), [
            "iss": .string(account.clientEmail), "sub": .string(account.clientEmail), "aud": .string(account.tokenURI),
            "scope": "https://www.googleapis.com/auth/firebase.messaging",
            "iat": .number(iat), "exp": .number(iat + 3600),
        ])

        let send = records[1]
        XCTAssertEqual(send.method, "POST")
        XCTAssertEqual(send.header("authorization"), "Bearer fcm-at-1")
        XCTAssertEqual(send.header("content-type"), "application/json")
        let expected: NSDictionary = ["message": [
            "token": "fcm-registration-token-1",
            "notification": ["title": "Anmeldung", "body": "Bitte bestätigen"],
            "data": ["token": confirmToken],
        ]]
        XCTAssertEqual(send.jsonBody, expected)
    }

    func testTheAccessTokenIsReusedUntilAMinuteBeforeItExpires() async throws {
        try start(arguments: ["--expires-in", "3600"])
        let sender = try makeSender()
        let message = PushTestMessages.message(pushProviderId: "device-a", confirmToken: try PushTestMessages.confirmToken(exp: nil))

        let first = await sender.send(message)
        clock.advance(by: 3600 - 61)
        let second = await sender.send(message)
        XCTAssertEqual([first, second], [.delivered, .delivered])
        XCTAssertEqual(try requests(to: "/token").count, 1, "two sends within the token's life: one token request")

        clock.advance(by: 1)  // 60 s before expiry
        let third = await sender.send(message)
        XCTAssertEqual(third, .delivered)
        XCTAssertEqual(try requests(to: "/token").count, 2)
        XCTAssertEqual(try requests(to: messagesPath).map { $0.header("authorization") },
                       ["Bearer fcm-at-1", "Bearer fcm-at-1", "Bearer fcm-at-2"])
    }

    func testConcurrentSendsShareOneTokenRequest() async throws {
        // The token endpoint answers slowly, so every send arrives while the first refresh is still running.
        try start(arguments: ["--token-delay", "0.5"])
        let sender = try makeSender()
        let message = PushTestMessages.message(pushProviderId: "device-a", confirmToken: try PushTestMessages.confirmToken(exp: nil))

        let outcomes = await withTaskGroup(of: PushDeliveryOutcome.self) { group in
            for _ in 0..<5 { group.addTask { await sender.send(message) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(outcomes, Array(repeating: .delivered, count: 5))
        XCTAssertEqual(try requests(to: "/token").count, 1)
        let sends = try requests(to: messagesPath)
        XCTAssertEqual(sends.count, 5)
        XCTAssertEqual(Set(sends.compactMap { $0.header("authorization") }), ["Bearer fcm-at-1"])
    }

    func testAnUnregisteredRegistrationTokenIsReported() async throws {
        try start(rules: [
            #"{"match": "\"token\":\"gone-device\"", "status": 404, "body": {"error": {"code": 404, "message": "Requested entity was not found.", "status": "NOT_FOUND", "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "UNREGISTERED"}]}}}"#,
            #"{"match": "\"token\":\"garbage-device\"", "status": 400, "body": {"error": {"code": 400, "message": "The registration token is not a valid FCM registration token", "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "INVALID_ARGUMENT"}]}}}"#,
            #"{"match": "\"token\":\"bad-payload-device\"", "status": 400, "body": {"error": {"code": 400, "message": "Invalid value at 'message.data'", "status": "INVALID_ARGUMENT"}}}"#,
        ])
        let sender = try makeSender()
        let confirmToken = try PushTestMessages.confirmToken(exp: nil)
        let gone = await sender.send(PushTestMessages.message(pushProviderId: "gone-device", confirmToken: confirmToken))
        let garbage = await sender.send(PushTestMessages.message(pushProviderId: "garbage-device", confirmToken: confirmToken))
        let badPayload = await sender.send(PushTestMessages.message(pushProviderId: "bad-payload-device", confirmToken: confirmToken))
        XCTAssertEqual(gone, .unregistered)
        XCTAssertEqual(garbage, .unregistered)
        XCTAssertEqual(badPayload, .failed, "an INVALID_ARGUMENT that is not about the token is our fault, not the device's")
    }

    func testAServerErrorIsAFailureThatIsLoggedWithoutTheAccessToken() async throws {
        let longBody = String(repeating: "é", count: 400)  // 800 bytes of two-byte characters
        try start(rules: [#"{"match": "messages:send", "status": 500, "body": "\#(longBody)"}"#])
        let sender = try makeSender()
        let outcome = await sender.send(
            PushTestMessages.message(pushProviderId: "device-a", confirmToken: try PushTestMessages.confirmToken(exp: nil)))
        XCTAssertEqual(outcome, .failed)

        let failure = try XCTUnwrap(logs.entries.first { $0.message == "FCM push failed" })
        XCTAssertEqual(failure.level, .error)
        XCTAssertEqual(failure.metadata["status"]?.description, "500")
        XCTAssertEqual(failure.metadata["body"]?.description, String(repeating: "é", count: 256), "trimmed to 512 bytes, whole characters")
        XCTAssertFalse(logs.allText.contains("fcm-at-1"), "the access token must never be logged")
    }

    func testATokenEndpointFailureSendsNothing() async throws {
        try start(rules: [#"{"match": "POST /token", "status": 400, "body": {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}}"#])
        let sender = try makeSender()
        let outcome = await sender.send(
            PushTestMessages.message(pushProviderId: "device-a", confirmToken: try PushTestMessages.confirmToken(exp: nil)))
        XCTAssertEqual(outcome, .failed)
        XCTAssertEqual(try double.records().map(\.path), ["/token"])
        let failure = try XCTUnwrap(logs.entries.first { $0.message == "FCM push failed: no access token" })
        XCTAssertEqual(failure.metadata["error"]?.description.contains("invalid_grant"), true)
    }

    func testARejectedAccessTokenIsDroppedAndTheNextSendFetchesANewOne() async throws {
        try start(rules: [#"{"match": "messages:send", "status": 401, "times": 1, "body": {"error": {"code": 401, "status": "UNAUTHENTICATED"}}}"#])
        let sender = try makeSender()
        let message = PushTestMessages.message(pushProviderId: "device-a", confirmToken: try PushTestMessages.confirmToken(exp: nil))
        let first = await sender.send(message)
        let second = await sender.send(message)
        XCTAssertEqual([first, second], [.failed, .delivered])
        XCTAssertEqual(try double.records().map(\.path), [
            "/token", "/v1/projects/keyward-test/messages:send", "/token", "/v1/projects/keyward-test/messages:send",
        ])
        XCTAssertEqual(try double.records().last?.header("authorization"), "Bearer fcm-at-2")
    }

    func testNoRegistrationTokenIsSkippedWithoutAnyRequest() async throws {
        try start()
        let sender = try makeSender()
        let outcome = await sender.send(
            PushTestMessages.message(pushProviderId: "", confirmToken: try PushTestMessages.confirmToken(exp: nil)))
        XCTAssertEqual(outcome, .skipped)
        XCTAssertEqual(try double.records().count, 0)
    }

    /// A sender whose FCM traffic goes through tests/push-doubles/connect_proxy.py, which wants push:proxy-secret.
    private func proxiedSender(password: String) throws -> (FCMPushSender, PushDoubleProcess) {
        let proxy = try PushDoubleProcess(script: "connect_proxy.py", arguments: { _ in ["--require-auth", "push:proxy-secret"] })
        var settings = FCMSettings(url: messagesURL, serviceAccountFile: account.path)
        settings.proxy = .server(host: "127.0.0.1", port: proxy.port, authorization: .basic(username: "push", password: password))
        return (try FCMPushSender(settings: settings, logger: logs.logger(), clock: clock.function), proxy)
    }

    func testSendsThroughTheConfiguredProxyWithItsCredentials() async throws {
        try start()
        let (sender, proxy) = try proxiedSender(password: "proxy-secret")
        defer { proxy.stop() }
        let outcome = await sender.send(PushTestMessages.message(pushProviderId: "fcm-registration-token-1", confirmToken: try PushTestMessages.confirmToken(exp: 1_800_000_240)))
        await sender.shutdown()
        await sender.shutdown()
        XCTAssertEqual(outcome, .delivered)
        XCTAssertEqual(try double.records().map(\.path), ["/token", messagesPath], "both calls reached FCM")
        let tunnels = try proxy.records()
        XCTAssertFalse(tunnels.isEmpty, "through the proxy")
        for tunnel in tunnels {
            XCTAssertEqual(tunnel.method, "CONNECT")
            XCTAssertEqual(tunnel.path, "127.0.0.1:\(double.port)")
            XCTAssertEqual(tunnel.header("proxy-authorization"), "Basic " + Data("push:proxy-secret".utf8).base64EncodedString())
        }
    }

    func testAProxyThatRefusesTheCredentialsFailsThePushNotTheLogin() async throws {
        try start()
        let (sender, proxy) = try proxiedSender(password: "wrong")
        defer { proxy.stop() }
        let outcome = await sender.send(PushTestMessages.message(pushProviderId: "fcm-registration-token-1", confirmToken: try PushTestMessages.confirmToken(exp: 1_800_000_240)))
        await sender.shutdown()
        XCTAssertEqual(outcome, .failed)
        XCTAssertEqual(try double.records().count, 0, "nothing reached FCM")
    }
}
