import XCTest

/// Waits for a background effect (a refresh behind a stale key set, a stream that starts watching) by polling every
/// 10 ms; fails after 10 s.
func eventually(_ condition: @Sendable () -> Bool, file: StaticString = #filePath, line: UInt = #line) async throws {
    for _ in 0..<1000 {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    XCTFail("condition not met within 10 s", file: file, line: line)
}
