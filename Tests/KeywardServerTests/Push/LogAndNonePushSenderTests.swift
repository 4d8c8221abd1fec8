// Tests: the log push sender logs the push without its confirm token (except in demo realms); none skips.
import Logging
import XCTest
@testable import KeywardServer

final class LogAndNonePushSenderTests: XCTestCase {
    func testTheLogLineCarriesThePushButNotTheConfirmToken() async throws {
        let logs = PushLogCapture()
        let outcome = await LogPushSender(logger: logs.logger()).send(
            PushTestMessages.message(pushProviderId: "fcm-token-1", confirmToken: "confirm.jwt.value"))
        XCTAssertEqual(outcome, .delivered)
        XCTAssertEqual(logs.entries.count, 1)
        let line = try XCTUnwrap(logs.entries.first)
        XCTAssertEqual(line.level, .info)
        XCTAssertEqual(line.metadata.mapValues(\.description), [
            "realm": "demo", "username": "test", "userId": "user-42", "credentialId": "cred-1",
            "challengeId": PushTestMessages.challengeId, "clientId": "test-app", "pushProviderId": "fcm-token-1",
            "version": "1", "type": "1",
        ])
        XCTAssertFalse(logs.allText.contains("confirm.jwt.value"))
    }

    func testDemoRealmsGetTheConfirmTokenInTheLine() async throws {
        let logs = PushLogCapture()
        _ = await LogPushSender(logger: logs.logger()).send(
            PushTestMessages.message(pushProviderId: "", confirmToken: "confirm.jwt.value", clientId: nil, demo: true))
        let line = try XCTUnwrap(logs.entries.first)
        XCTAssertEqual(line.metadata["confirmToken"]?.description, "confirm.jwt.value")
        XCTAssertNil(line.metadata["clientId"], "no client: the member is left out")
        XCTAssertEqual(line.metadata["pushProviderId"]?.description, "")
    }

    func testTheNoneSenderSkips() async {
        let outcome = await NonePushSender().send(PushTestMessages.message(pushProviderId: "", confirmToken: "x"))
        XCTAssertEqual(outcome, .skipped)
    }
}
