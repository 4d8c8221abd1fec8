// Test support: captures what a Logger writes so push tests can check log lines, and a hand-moved clock.
import Foundation
import Logging

/// Collects what a `Logger` writes, so tests can check log lines (and what they must not contain).
final class PushLogCapture: @unchecked Sendable {
    struct Entry {
        let level: Logger.Level
        let message: String
        let metadata: Logger.Metadata
    }

    private let lock = NSLock()
    private var stored: [Entry] = []

    var entries: [Entry] {
        lock.withLock { stored }
    }

    func logger(label: String = "push-test") -> Logger {
        Logger(label: label) { _ in Handler(capture: self) }
    }

    /// Every message and metadata value as text, to search for things that must never be logged.
    var allText: String {
        entries.map { entry in
            entry.message + " " + entry.metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }.joined(separator: "\n")
    }

    fileprivate func append(_ entry: Entry) {
        lock.withLock { stored.append(entry) }
    }

    private struct Handler: LogHandler {
        let capture: PushLogCapture
        var metadata: Logger.Metadata = [:]
        var metadataProvider: Logger.MetadataProvider?
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
            capture.append(Entry(level: event.level, message: event.message.description, metadata: merged))
        }
    }
}

/// A clock the test moves by hand.
final class PushTestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = start
    }

    var now: Date {
        lock.withLock { current }
    }

    func advance(by seconds: TimeInterval) {
        lock.withLock { current = current.addingTimeInterval(seconds) }
    }

    var function: @Sendable () -> Date {
        { self.now }
    }
}
