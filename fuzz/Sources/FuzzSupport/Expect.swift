// Expectations a fuzz target checks on top of "does not trap": a broken one stops the run like a crash does.

/// Stops with the message (a trap) and the caller's line, so libFuzzer keeps the input as a crash artifact.
/// `fatalError` rather than `precondition`: its message survives an optimized build.
public func expect(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    guard !condition() else { return }
    fatalError("fuzz expectation failed: \(message())", file: file, line: line)
}

/// The same stop, where the check is a `guard` or a `catch`.
public func expectationFailed(_ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError("fuzz expectation failed: \(message())", file: file, line: line)
}
