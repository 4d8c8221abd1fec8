// The log as text for a person at a terminal: `time level message key=value …`, one line per event.
import Foundation
import Logging

/// One line per event on stdout: `2026-11-30T14:03:12.345Z info     message key=value key="a value"`. Metadata
/// comes in key order (as in the JSON log); a value is quoted when it is empty or holds a space, a quote, `=`
/// or a control character. Newlines and other control characters are escaped wherever they appear, so one event
/// stays one line and a logged value cannot drive the terminal. With `colour`, the level is coloured.
public struct TextLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String
    private let colour: Bool

    public init(label: String, colour: Bool = false) {
        self.label = label
        self.colour = colour
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let record = LogRecord(event: event, handlerMetadata: metadata, label: label)
        LogOutput.write(Data((Self.line(record, colour: colour) + "\n").utf8))
    }

    /// The record as one line, without its newline.
    static func line(_ record: LogRecord, colour: Bool = false) -> String {
        var line = record.timestamp + " " + levelName(record.level, colour: colour) + " " + escaped(record.message)
        for (key, value) in record.metadata {
            line += " " + field(key) + "=" + field(value)
        }
        return line
    }

    /// The level's name, padded to the longest (`critical`) so messages line up.
    static func levelName(_ level: Logger.Level, colour: Bool) -> String {
        let name = level.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)
        guard colour else { return name }
        let code: String
        switch level {
        case .trace, .debug: code = "2"  // dim
        case .info: return name
        case .notice: code = "36"  // cyan
        case .warning: code = "33"  // yellow
        case .error, .critical: code = "1;31"  // bold red
        }
        return "\u{1B}[\(code)m\(name)\u{1B}[0m"
    }

    /// A key or value: as it is when that is unambiguous, otherwise quoted with `\` and `"` escaped.
    static func field(_ text: String) -> String {
        let plain = !text.isEmpty && !text.unicodeScalars.contains { $0 == " " || $0 == "\"" || $0 == "=" || isControl($0) }
        if plain { return text }
        return "\"" + escaped(text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")) + "\""
    }

    /// `text` with control characters written as `\n`, `\r`, `\t` or `\u{…}`.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where isControl(scalar): result += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// C0 and C1 control characters and DEL: ESC and CSI among them start terminal escape sequences.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
