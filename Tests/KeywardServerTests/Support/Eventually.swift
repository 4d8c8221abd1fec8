// Test support: waits for a background effect by polling every 10 ms, failing after about 10 seconds.
import XCTest

/// Waits for a background effect (a refresh behind a stale key set, a stream that starts watching, a LISTEN) by
/// polling every 10 ms; fails with `failure` after 1,000 polls (10 s plus the time the checks take).
func eventually(
    _ failure: @autoclosure () -> String = "condition not met within 10 s",
    file: StaticString = #filePath, line: UInt = #line,
    _ condition: @Sendable () async throws -> Bool
) async throws {
    for _ in 0..<1000 {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    XCTFail(failure(), file: file, line: line)
}
