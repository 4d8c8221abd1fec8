// Test support: a Python push-service double run as a child process on a free port, and the requests it recorded.
import Foundation
import XCTest

/// A Python push-service double (tests/push-doubles/) running as a child process: started on a free port,
/// stopped by `stop()` (and by itself if this process dies, since it exits when its stdin closes).
final class PushDoubleProcess: @unchecked Sendable {
    struct StartFailure: Error, CustomStringConvertible {
        let description: String
    }

    let port: Int
    /// A private temporary directory: records, CA file, and whatever a test writes next to them.
    let directory: URL
    let recordsFile: URL
    private let process: Process
    private let stdinPipe: Pipe

    /// The Python that has hypercorn, h2 and trustme (CI's .venv). Unset: skipped locally, a failure in CI.
    static func python() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        if let python = environment["KEYWARD_TEST_PYTHON"], !python.isEmpty {
            return python
        }
        if environment["CI"] == "true" {
            XCTFail("KEYWARD_TEST_PYTHON is not set; CI must run the push doubles (see .ci/run, venv step)")
            throw StartFailure(description: "KEYWARD_TEST_PYTHON is not set")
        }
        throw XCTSkip("KEYWARD_TEST_PYTHON is not set (a Python with hypercorn, h2 and trustme); push double test skipped")
    }

    /// tests/push-doubles, found from this file: Tests/KeywardServerTests/Push/ → repository root.
    static var doublesDirectory: URL {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("tests/push-doubles")
    }

    /// `rules` are JSON objects as push_double.py describes them; `arguments` gets the double's directory (for
    /// output files such as the APNs double's CA).
    init(script: String, rules: [String] = [], arguments extra: (URL) -> [String] = { _ in [] }) throws {
        let python = try Self.python()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-push-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        recordsFile = directory.appendingPathComponent("records.jsonl")
        let stderrFile = directory.appendingPathComponent("stderr.log")
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)

        process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        var arguments = [Self.doublesDirectory.appendingPathComponent(script).path, "--records", recordsFile.path,
                         "--max-seconds", "120"]
        for rule in rules { arguments += ["--rule", rule] }
        process.arguments = arguments + extra(directory)
        stdinPipe = Pipe()
        let stdoutPipe = Pipe()
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        try process.run()

        // The first stdout line is the port. A double that dies first gives EOF, never a hang (it also has a watchdog).
        var line = [UInt8]()
        while true {
            let byte = stdoutPipe.fileHandleForReading.readData(ofLength: 1)
            guard let first = byte.first else { break }
            if first == UInt8(ascii: "\n") { break }
            line.append(first)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            process.waitUntilExit()
            let stderr = (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
            throw StartFailure(description: "\(script) did not start (exit \(process.terminationStatus)): \(stderr)")
        }
        self.port = port
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    func records() throws -> [PushDoubleRecord] {
        guard let data = FileManager.default.contents(atPath: recordsFile.path) else { return [] }
        return try data.split(separator: UInt8(ascii: "\n")).map {
            try JSONDecoder().decode(PushDoubleRecord.self, from: Data($0))
        }
    }

    func stop() {
        try? stdinPipe.fileHandleForWriting.close()
        if process.isRunning {
            process.terminate()
        }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// One request as the double saw it.
struct PushDoubleRecord: Decodable {
    let method: String
    let path: String
    let httpVersion: String
    let headers: [[String]]
    let body: String

    enum CodingKeys: String, CodingKey {
        case method, path, headers, body
        case httpVersion = "http_version"
    }

    /// Header names are lowercased by the double.
    func header(_ name: String) -> String? {
        headers.first { $0.first == name.lowercased() }?.last
    }

    func headerCount(_ name: String) -> Int {
        headers.filter { $0.first == name.lowercased() }.count
    }

    var jsonBody: NSDictionary? {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? NSDictionary
    }

    /// `application/x-www-form-urlencoded` fields.
    var formFields: [String: String] {
        var components = URLComponents()
        components.percentEncodedQuery = body.replacingOccurrences(of: "+", with: "%20")
        var fields: [String: String] = [:]
        for item in components.queryItems ?? [] { fields[item.name] = item.value ?? "" }
        return fields
    }
}
