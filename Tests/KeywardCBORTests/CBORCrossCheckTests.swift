// Tests: the CBOR reader agrees with Python's cbor2 on random values and their mutations.
import Foundation
import KeywardCBOR
import XCTest

/// The reader against an independent implementation, Python's cbor2 (tests/cbor/cbor2_peer.py): seeded random
/// nested values that cbor2 encoded, and mutations of them that cbor2 decoded or refused.
final class CBORCrossCheckTests: XCTestCase {
    /// What the peer writes per line; see cbor2_peer.py.
    private struct PeerVerdict {
        let input: [UInt8]
        /// What cbor2 read (`.some(nil)`: something the reader has no case for, such as a float or a tag), or nil
        /// when cbor2 refused the input.
        let tree: CBORValue??
        let error: String?
    }

    /// 300 values and 7 mutations of each. The reader must read every value cbor2 encoded as cbor2 reads it back,
    /// refuse whatever cbor2 refuses, and where it accepts a mutation, read the same tree as cbor2.
    func testReaderAgreesWithCbor2OnRandomValuesAndTheirMutations() throws {
        let verdicts = try runPeer(seed: 20_261_125, count: 300)
        XCTAssertEqual(verdicts.count, 300 * 8)
        var accepted = 0, refusedByBoth = 0, stricter: [CBORError.Kind: Int] = [:]
        for (index, verdict) in verdicts.enumerated() {
            let hex = verdict.input.map { String(format: "%02x", $0) }.joined()
            let ours: Result<CBORValue, CBORError>
            do throws(CBORError) {
                ours = .success(try CBORReader.decode(verdict.input))
            } catch {
                ours = .failure(error)
            }
            switch (ours, verdict.tree) {
            case (.success(let value), .some(.some(let expected))):
                XCTAssertEqual(value, expected, "reads \(hex) differently from cbor2")
                accepted += 1
            case (.success(let value), _):
                XCTFail("accepted \(hex) as \(value), cbor2: \(verdict.error ?? "a value the reader has no case for")")
            case (.failure, nil):
                refusedByBoth += 1
            case (.failure(let error), .some(let tree)):
                // The reader is stricter than cbor2 by design, only in these rules.
                let stricterRules: Set<CBORError.Kind> = [.tag, .unsupportedSimpleValue, .indefiniteLength, .duplicateMapKey, .unsupportedMapKey]
                XCTAssertTrue(stricterRules.contains(error.kind), "refused \(hex) (\(error)) that cbor2 reads as \(String(describing: tree))")
                stricter[error.kind, default: 0] += 1
            }
            // Each value cbor2 encoded, and the same with a longer head, must be read.
            if index % 8 < 2, case .failure(let error) = ours {
                XCTFail("refused cbor2's own encoding \(hex): \(error)")
            }
        }
        XCTAssertGreaterThanOrEqual(accepted, 600)
        XCTAssertGreaterThan(refusedByBoth, 100)
        print("CBOR cross-check: \(accepted) read alike, \(refusedByBoth) refused by both, stricter than cbor2: \(stricter)")
    }

    // MARK: The peer

    private func runPeer(seed: Int, count: Int) throws -> [PeerVerdict] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.python())
        process.arguments = [Self.peerScript.path, "random", String(seed), String(count)]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read stdout to its end before waiting: the peer writes more than a pipe buffer holds.
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw PeerFailure(description: "cbor2_peer.py exited \(process.terminationStatus): \(stderr)")
        }
        return try data.split(separator: UInt8(ascii: "\n")).map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                let hex = object["cbor"] as? String, let input = Self.bytes(hex: hex)
            else { throw PeerFailure(description: "unreadable peer line \(String(decoding: line, as: UTF8.self))") }
            if let tree = object["tree"] {
                return PeerVerdict(input: input, tree: .some(try Self.value(tree)), error: nil)
            }
            return PeerVerdict(input: input, tree: nil, error: object["error"] as? String ?? "no verdict")
        }
    }

    /// The Python with cbor2 (CI's .venv, `bash .ci/run venv`). Unset is a failure, not a skip: the reader is
    /// security-relevant and this is its only independent check.
    private static func python() throws -> String {
        guard let python = ProcessInfo.processInfo.environment["KEYWARD_TEST_PYTHON"], !python.isEmpty else {
            XCTFail("KEYWARD_TEST_PYTHON is not set: point it at a Python with cbor2 (bash .ci/run venv sets it to .venv/bin/python)")
            throw PeerFailure(description: "KEYWARD_TEST_PYTHON is not set")
        }
        return python
    }

    /// tests/cbor/cbor2_peer.py, found from this file: Tests/KeywardCBORTests/ → repository root.
    private static var peerScript: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("tests/cbor/cbor2_peer.py")
    }

    private struct PeerFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// The peer's tree notation as a value; nil for what cbor2 read that the reader has no case for.
    private static func value(_ tree: Any) throws -> CBORValue? {
        guard let node = tree as? [Any], let tag = node.first as? String else {
            throw PeerFailure(description: "not a tree node: \(tree)")
        }
        let argument = node.count > 1 ? node[1] : nil
        switch tag {
        case "u", "n":
            guard let text = argument as? String, let number = UInt64(text) else { throw PeerFailure(description: "bad integer \(node)") }
            return tag == "u" ? .unsigned(number) : .negative(number)
        case "b":
            guard let hex = argument as? String, let bytes = bytes(hex: hex) else { throw PeerFailure(description: "bad bytes \(node)") }
            return .bytes(bytes)
        case "t":
            guard let text = argument as? String else { throw PeerFailure(description: "bad text \(node)") }
            return .text(text)
        case "a":
            guard let items = argument as? [Any] else { throw PeerFailure(description: "bad array \(node)") }
            var values: [CBORValue] = []
            for item in items {
                guard let value = try value(item) else { return nil }
                values.append(value)
            }
            return .array(values)
        case "m":
            guard let pairs = argument as? [[Any]] else { throw PeerFailure(description: "bad map \(node)") }
            var entries: [CBORMapEntry] = []
            for pair in pairs {
                guard pair.count == 2, let key = try value(pair[0]), let item = try value(pair[1]) else { return nil }
                entries.append(CBORMapEntry(key, item))
            }
            return .map(entries)
        case "bool":
            guard let flag = argument as? Bool else { throw PeerFailure(description: "bad bool \(node)") }
            return .bool(flag)
        case "null":
            return .null
        default:
            return nil
        }
    }

    private static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<(index + 2)], as: UTF8.self), radix: 16) else { return nil }
            result.append(byte)
        }
        return result
    }
}
