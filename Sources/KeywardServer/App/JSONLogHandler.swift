// The log as JSON, one object per line: what machines (a log shipper, the interop tests) read.
import Foundation
import Logging

/// One JSON object per line on stdout: timestamp, level, message, label and metadata (incl. the request id
/// Hummingbird attaches as `hb.request.id`, written `request_id`). Lines are written whole so concurrent requests
/// never interleave.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String

    public init(label: String) {
        self.label = label
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        guard let line = Self.line(LogRecord(event: event, handlerMetadata: metadata, label: label)) else { return }
        LogOutput.write(line)
    }

    /// The record as one JSON object and a newline.
    static func line(_ record: LogRecord) -> Data? {
        var object: [String: String] = [
            "ts": record.timestamp,
            "level": record.level.rawValue,
            "msg": record.message,
            "logger": record.label,
        ]
        for (key, value) in record.metadata {
            object[key] = value
        }
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return nil }
        line.append(UInt8(ascii: "\n"))
        return line
    }
}
