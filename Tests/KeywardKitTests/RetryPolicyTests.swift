// Tests: the retry policy's doubling delays with bounded jitter, and which errors it retries.
import Foundation
import KeywardKit
import XCTest

final class RetryPolicyTests: XCTestCase {
    func testDelaysDoubleFromTwoSecondsPlusJitterAndStopAtThirty() {
        let policy = RetryPolicy(jitter: { 0.25 })
        XCTAssertEqual((1...6).map { policy.delay(afterAttempt: $0) }, [
            .milliseconds(2250), .milliseconds(4250), .milliseconds(8250), .milliseconds(16250), .seconds(30), .seconds(30),
        ])
    }

    func testJitterIsKeptWithinHalfASecond() {
        XCTAssertEqual(RetryPolicy(jitter: { 7 }).delay(afterAttempt: 1), .milliseconds(2500))
        XCTAssertEqual(RetryPolicy(jitter: { -3 }).delay(afterAttempt: 1), .seconds(2))
        let random = RetryPolicy()
        for _ in 0..<100 {
            let delay = random.delay(afterAttempt: 2)
            XCTAssertGreaterThanOrEqual(delay, .seconds(4))
            XCTAssertLessThanOrEqual(delay, .milliseconds(4500))
        }
    }

    func testOnlyNoAnswerAndServerErrorsAreRetried() {
        XCTAssertTrue(RetryPolicy.isRetryable(KeywardKitError.unreachable(url: "http://127.0.0.1:1", reason: "connection refused")))
        XCTAssertTrue(RetryPolicy.isRetryable(KeywardKitError.server(status: 500, code: "internal_error", description: nil)))
        XCTAssertTrue(RetryPolicy.isRetryable(KeywardKitError.server(status: 503, code: "unavailable", description: nil)))
        for status in [400, 401, 403, 404, 409, 429] {
            XCTAssertFalse(RetryPolicy.isRetryable(KeywardKitError.server(status: status, code: nil, description: nil)), "\(status)")
        }
        XCTAssertFalse(RetryPolicy.isRetryable(KeywardKitError.unexpectedResponse("not JSON")))
        XCTAssertFalse(RetryPolicy.isRetryable(CancellationError()))
    }
}
