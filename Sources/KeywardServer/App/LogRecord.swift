// What both log handlers share: one event gathered into a record (time, level, message, metadata in a stable
// order), and the stream they write whole lines to.
import Foundation
import Logging
import Synchronization

/// A log event with its handler's metadata merged in (the event's values win), ready to be formatted.
struct LogRecord {
    var timestamp: String
    var level: Logger.Level
    var message: String
    var label: String
    /// Sorted by key; Hummingbird's `hb.request.id` is called `request_id`.
    var metadata: [(key: String, value: String)]

    private static let timestampStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    init(event: LogEvent, handlerMetadata: Logger.Metadata, label: String, date: Date = Date()) {
        timestamp = date.formatted(Self.timestampStyle)
        level = event.level
        message = event.message.description
        self.label = label
        var merged: [String: String] = [:]
        for (key, value) in handlerMetadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            merged[key == "hb.request.id" ? "request_id" : key] = value.description
        }
        metadata = merged.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }
    }
}

/// Standard output, where the server's log goes. Lines are written whole, under a lock, so concurrent requests
/// never interleave.
enum LogOutput {
    private static let stream = Mutex<FileHandle>(FileHandle.standardOutput)

    static func write(_ line: Data) {
        stream.withLock { $0.write(line) }
    }

    /// Whether the log lands on a terminal (then a person reads it, and `log.format=auto` writes text).
    static var isTerminal: Bool {
        isatty(FileHandle.standardOutput.fileDescriptor) == 1
    }
}
