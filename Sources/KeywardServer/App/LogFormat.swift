// log.format: which log handler `keyward serve` writes with, JSON for machines or text for a person.
import Foundation
import Logging

public enum LogFormat: String, Sendable, Equatable {
    case json
    case text

    /// The values `log.format` accepts; `auto` means text on a terminal and JSON anywhere else.
    public static let settingValues = ["auto", "json", "text"]

    /// The format a `log.format` value stands for, given whether the log's stream (stdout) is a terminal.
    public init(setting: String, outputIsTerminal: Bool) {
        switch setting {
        case "json": self = .json
        case "text": self = .text
        default: self = outputIsTerminal ? .text : .json
        }
    }

    /// The format for this process: `auto` looks at whether standard output is a terminal.
    public init(setting: String) {
        self.init(setting: setting, outputIsTerminal: LogOutput.isTerminal)
    }

    /// A handler writing this format to stdout. Text is coloured only on a terminal and when the environment has
    /// no `NO_COLOR` (https://no-color.org).
    public func handler(label: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> any LogHandler {
        switch self {
        case .json:
            return JSONLogHandler(label: label)
        case .text:
            return TextLogHandler(label: label, colour: LogOutput.isTerminal && (environment["NO_COLOR"] ?? "").isEmpty)
        }
    }
}
