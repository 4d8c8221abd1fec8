// Tests: the push dispatcher picks the sender by push type, falls back to the log sender, or skips.
import Foundation
import Logging
import XCTest
@testable import KeywardServer

final class PushDispatcherTests: XCTestCase {
    /// What the metrics hook was told.
    private final class Recorded: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [String] = []
        var values: [String] { lock.withLock { stored } }
        func add(_ type: String, _ outcome: PushDeliveryOutcome) { lock.withLock { stored.append("\(type):\(outcome.rawValue)") } }
    }

    private let senderLogs = PushLogCapture()
    private let dispatcherLogs = PushLogCapture()
    private let recorded = Recorded()

    private func dispatcher(_ senders: [any PushSender]? = nil) -> PushDispatcher {
        let recorded = recorded
        return PushDispatcher(
            senders: senders ?? [LogPushSender(logger: senderLogs.logger()), NonePushSender()],
            logger: dispatcherLogs.logger(), record: { recorded.add($0, $1) })
    }

    private let message = PushTestMessages.message(pushProviderId: "p", confirmToken: "c")

    func testPicksTheSenderByType() async {
        let outcome = await dispatcher().dispatch(message, providerType: "none")
        XCTAssertEqual(outcome, .skipped)
        XCTAssertTrue(senderLogs.entries.isEmpty, "the none sender ran, not the log sender")
        XCTAssertEqual(recorded.values, ["none:skipped"])
    }

    func testBlankTypesUseTheLogSender() async {
        let dispatcher = dispatcher()
        for type in ["", "  ", "log"] {
            let outcome = await dispatcher.dispatch(message, providerType: type)
            XCTAssertEqual(outcome, .delivered)
        }
        XCTAssertEqual(senderLogs.entries.count, 3)
        XCTAssertEqual(recorded.values, ["log:delivered", "log:delivered", "log:delivered"])
        XCTAssertFalse(dispatcherLogs.entries.contains { $0.level >= .warning })
    }

    func testAnUnknownTypeFallsBackToTheLogSenderWithAWarning() async throws {
        let outcome = await dispatcher().dispatch(message, providerType: "carrier-pigeon")
        XCTAssertEqual(outcome, .delivered)
        XCTAssertEqual(senderLogs.entries.count, 1)
        let warning = try XCTUnwrap(dispatcherLogs.entries.first { $0.level == .warning })
        XCTAssertEqual(warning.metadata["requestedProviderType"]?.description, "carrier-pigeon")
        XCTAssertEqual(recorded.values, ["log:delivered"], "metric labels name senders, never device-chosen strings")
    }

    func testWithoutAnyUsableSenderThePushIsSkipped() async {
        let outcome = await dispatcher([NonePushSender()]).dispatch(message, providerType: "fcm")
        XCTAssertEqual(outcome, .skipped)
        XCTAssertEqual(recorded.values, ["log:skipped"])
        XCTAssertTrue(dispatcherLogs.entries.contains { $0.message == "no push sender available; push skipped" })
    }

    func testDispatchesToFCMThroughTheDouble() async throws {
        let double = try PushDoubleProcess(script: "fcm_double.py")
        defer { double.stop() }
        let account = try PushTestKeys.writeServiceAccount(in: double.directory, tokenURI: double.baseURL + "/token")
        let fcm = try FCMPushSender(
            settings: FCMSettings(url: double.baseURL + "/v1/projects/p/messages:send", serviceAccountFile: account.path),
            logger: senderLogs.logger())
        let outcome = await dispatcher([LogPushSender(logger: senderLogs.logger()), fcm]).dispatch(message, providerType: "fcm")
        XCTAssertEqual(outcome, .delivered)
        XCTAssertEqual(try double.records().map(\.path), ["/token", "/v1/projects/p/messages:send"])
        XCTAssertEqual(recorded.values, ["fcm:delivered"])
        XCTAssertTrue(senderLogs.entries.isEmpty, "the log sender did not run")
    }
}
