// The text log (escaping, metadata order, level names), the JSON log it shares its record with, and log.format.
import Foundation
import Logging
import XCTest

@testable import KeywardServer

final class LogFormatTests: XCTestCase {
    private let date = Date(timeIntervalSince1970: 1_800_000_000.25)

    private func record(
        _ message: String, level: Logger.Level = .info, metadata: Logger.Metadata? = nil, handlerMetadata: Logger.Metadata = [:]
    ) -> LogRecord {
        let event = LogEvent(level: level, message: "\(message)", metadata: metadata, source: nil, file: #fileID, function: #function, line: #line)
        return LogRecord(event: event, handlerMetadata: handlerMetadata, label: "keyward", date: date)
    }

    // MARK: the text line

    func testLineIsTimeLevelMessageThenMetadataInKeyOrder() {
        let line = TextLogHandler.line(record(
            "request served", metadata: ["status": "200", "path": "/healthz", "hb.request.id": "abc1", "method": "GET"],
            handlerMetadata: ["node": "a", "status": "overridden by the event"]
        ))
        XCTAssertEqual(line, "2027-01-15T08:00:00.250Z info     request served method=GET node=a path=/healthz request_id=abc1 status=200")
    }

    func testLevelNamesArePaddedToTheLongest() {
        for level in Logger.Level.allCases {
            let name = TextLogHandler.levelName(level, colour: false)
            XCTAssertEqual(name.count, 8, name)
            XCTAssertEqual(name.trimmingCharacters(in: .whitespaces), level.rawValue)
        }
        let line = TextLogHandler.line(record("boom", level: .critical))
        XCTAssertTrue(line.hasSuffix(" critical boom"), line)
        XCTAssertTrue(TextLogHandler.line(record("careful", level: .warning)).hasSuffix(" warning  careful"))
    }

    func testValuesWithSpacesQuotesOrEqualsAreQuotedAndEscaped() {
        XCTAssertEqual(TextLogHandler.field("plain"), "plain")
        XCTAssertEqual(TextLogHandler.field("/a/b?c&d"), "/a/b?c&d")
        XCTAssertEqual(TextLogHandler.field(#"C:\dir"#), #"C:\dir"#, "a backslash alone is unambiguous")
        XCTAssertEqual(TextLogHandler.field("two words"), #""two words""#)
        XCTAssertEqual(TextLogHandler.field(#"say "hi""#), #""say \"hi\"""#)
        XCTAssertEqual(TextLogHandler.field("a=b"), #""a=b""#)
        XCTAssertEqual(TextLogHandler.field(""), #""""#)
        XCTAssertEqual(TextLogHandler.field(#"back\slash and space"#), #""back\\slash and space""#)
        XCTAssertEqual(TextLogHandler.field("line1\nline2"), #""line1\nline2""#)
        XCTAssertEqual(TextLogHandler.field("tab\there"), #""tab\there""#)
        XCTAssertEqual(TextLogHandler.field("ünïcödé"), "ünïcödé")
    }

    func testEveryEventStaysOneLineAndCannotDriveTheTerminal() {
        let line = TextLogHandler.line(record(
            "first\nsecond\r\u{1B}[2J", metadata: ["user": "eve\n2027-01-01T00:00:00Z error forged", "agent": "\u{9B}31m"]
        ))
        XCTAssertFalse(line.contains("\n"))
        XCTAssertFalse(line.contains("\r"))
        XCTAssertFalse(line.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x9B })
        XCTAssertEqual(
            line,
            #"2027-01-15T08:00:00.250Z info     first\nsecond\r\u{1b}[2J agent="\u{9b}31m" user="eve\n2027-01-01T00:00:00Z error forged""#
        )
    }

    func testMessagesKeepTheirSpacesAndQuotesUnquoted() {
        XCTAssertTrue(TextLogHandler.line(record(#"user "test" signed in"#)).hasSuffix(#" info     user "test" signed in"#))
    }

    func testColourOnlyWhenAsked() {
        XCTAssertFalse(TextLogHandler.line(record("x", level: .error)).contains("\u{1B}"))
        let coloured = TextLogHandler.levelName(.error, colour: true)
        XCTAssertTrue(coloured.hasPrefix("\u{1B}[1;31m") && coloured.hasSuffix("\u{1B}[0m"), coloured)
        XCTAssertEqual(TextLogHandler.levelName(.info, colour: true), "info    ", "info stays plain")
    }

    func testJSONLineCarriesTheSameRecord() throws {
        let data = try XCTUnwrap(JSONLogHandler.line(record("request served", metadata: ["hb.request.id": "abc1", "status": "200"])))
        XCTAssertEqual(data.last, UInt8(ascii: "\n"))
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: String])
        XCTAssertEqual(object, [
            "ts": "2027-01-15T08:00:00.250Z", "level": "info", "msg": "request served", "logger": "keyward", "request_id": "abc1", "status": "200",
        ])
    }

    // MARK: log.format

    func testAutoIsTextOnATerminalAndJSONElsewhere() {
        XCTAssertEqual(LogFormat(setting: "auto", outputIsTerminal: true), .text)
        XCTAssertEqual(LogFormat(setting: "auto", outputIsTerminal: false), .json)
        XCTAssertEqual(LogFormat(setting: "json", outputIsTerminal: true), .json)
        XCTAssertEqual(LogFormat(setting: "text", outputIsTerminal: false), .text)
        XCTAssertTrue(LogFormat.json.handler(label: "keyward") is JSONLogHandler)
        XCTAssertTrue(LogFormat.text.handler(label: "keyward", environment: ["NO_COLOR": "1"]) is TextLogHandler)
    }

    func testSettingDefaultsToAutoAndAcceptsEachValue() async throws {
        let defaults = try await KeywardConfiguration.load(environment: [:])
        XCTAssertEqual(defaults.logFormat, "auto")
        for value in ["auto", "json", "text", "TEXT"] {
            let fromEnvironment = try await KeywardConfiguration.load(environment: ["KEYWARD_LOG_FORMAT": value])
            XCTAssertEqual(fromEnvironment.logFormat, value.lowercased())
        }
        let flagBeatsEnvironment = try await KeywardConfiguration.load(overrides: ["log.format": "json"], environment: ["KEYWARD_LOG_FORMAT": "text"])
        XCTAssertEqual(flagBeatsEnvironment.logFormat, "json")
    }

    func testUnknownFormatIsRefusedNamingTheSettingAndTheValues() async throws {
        do {
            _ = try await KeywardConfiguration.load(environment: ["KEYWARD_LOG_FORMAT": "pretty"])
            XCTFail("accepted log.format=pretty")
        } catch let error as ConfigurationError {
            XCTAssertEqual(error.description, "invalid configuration: log.format (env KEYWARD_LOG_FORMAT): 'pretty' is not one of auto, json, text")
        }
    }
}
