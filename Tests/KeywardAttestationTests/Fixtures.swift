// Test support: finds and reads the real device data under Tests/Fixtures from this file's own path.
import Foundation
import X509

/// The real device data under Tests/Fixtures (provenance in its README), found from this file's own path so the
/// tests run on a plain clone.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func url(_ relativePath: String) -> URL {
        root.appendingPathComponent(relativePath)
    }

    static func text(_ relativePath: String) throws -> String {
        try String(contentsOf: url(relativePath), encoding: .utf8)
    }

    static func data(_ relativePath: String) throws -> Data {
        try Data(contentsOf: url(relativePath))
    }

    /// The files of a fixture folder with the given extension, sorted by name.
    static func files(in folder: String, extension pathExtension: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url(folder).path)
            .filter { $0.hasSuffix("." + pathExtension) }
            .sorted()
            .map { folder + "/" + $0 }
    }

    /// The expected KeyDescription beside an Android chain, as JSON (its `//` comment lines dropped).
    static func androidExpectation(_ relativePath: String) throws -> [String: Any] {
        let lines = try text(relativePath).split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.drop(while: { $0 == " " }).hasPrefix("//") }
        let object = try JSONSerialization.jsonObject(with: Data(lines.joined(separator: "\n").utf8))
        guard let dictionary = object as? [String: Any] else { throw CocoaError(.fileReadCorruptFile) }
        return dictionary
    }

    /// When an Android key was made (softwareEnforced.creationDateTime, ms): the time its chain verifies at.
    static func androidCreationTime(_ relativePath: String) throws -> Date {
        let software = try androidExpectation(relativePath)["softwareEnforced"] as? [String: Any]
        guard let text = software?["creationDateTime"] as? String, let milliseconds = Double(text) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        return Date(timeIntervalSince1970: milliseconds / 1000)
    }
}
