import Foundation
import Logging
import Synchronization

/// One JSON object per line on stdout: timestamp, level, message, label and metadata (incl. the request id
/// Hummingbird attaches as `hb.request.id`). Lines are written whole so concurrent requests never interleave.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String
    private static let output = Mutex<FileHandle>(FileHandle.standardOutput)
    private static let timestampStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    public init(label: String) {
        self.label = label
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var object: [String: String] = [
            "ts": Date().formatted(Self.timestampStyle),
            "level": event.level.rawValue,
            "msg": event.message.description,
            "logger": label,
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            object[key == "hb.request.id" ? "request_id" : key] = value.description
        }
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(UInt8(ascii: "\n"))
        Self.output.withLock { $0.write(line) }
    }
}
