// Tests: the JWE reader agrees with Python's joserfc on random tokens, their mutations, and other algorithm pairs.
import Foundation
import XCTest
@testable import KeywardJOSE

/// The JWE reader against an independent implementation, Python's joserfc (tests/jose/joserfc_jwe_peer.py): tokens
/// joserfc encrypted decrypt to joserfc's plaintext, mutations joserfc refuses are refused, and the algorithm pairs
/// joserfc writes that are not A256KW + A256GCM are refused with their own codes.
final class JWECrossCheckTests: XCTestCase {
    /// 200 random tokens and 6 one-bit mutations of each; every verdict must be joserfc's.
    func testReaderAgreesWithJoserfcOnRandomTokensAndTheirMutations() throws {
        let lines = try JoserfcPeer.run(["random", "20261125", "200"])
        XCTAssertEqual(lines.count, 200 * 7)
        var decrypted = 0, refusedByBoth = 0, codes: [JOSEError.Code: Int] = [:]
        for (index, line) in lines.enumerated() {
            let kek = try Base64URL.decode(try XCTUnwrap(line["kek"] as? String))
            let token = try XCTUnwrap(line["token"] as? String)
            let ours: Result<JWE, JOSEError>
            do throws(JOSEError) {
                ours = .success(try JWE.decrypt(token, keyEncryptionKey: kek))
            } catch {
                ours = .failure(error)
            }
            switch (ours, line["plaintext"] as? String) {
            case (.success(let jwe), let plaintext?):
                XCTAssertEqual(jwe.plaintext, try Base64URL.decode(plaintext), "line \(index)")
                decrypted += 1
            case (.success, nil):
                XCTFail("decrypted \(token), which joserfc refuses (\(line["error"] ?? "?"))")
            case (.failure(let error), .some):
                XCTFail("refused \(token), which joserfc decrypts: \(error)")
            case (.failure(let error), nil):
                refusedByBoth += 1
                codes[error.code, default: 0] += 1
            }
            if index % 7 == 0, case .failure(let error) = ours {
                XCTFail("refused joserfc's own token \(token): \(error)")
            }
        }
        XCTAssertEqual(decrypted, 200)
        XCTAssertEqual(refusedByBoth, 1200)
        XCTAssertGreaterThan(codes[.decryptionFailed] ?? 0, 100, "\(codes)")
        XCTAssertGreaterThan(codes[.keyUnwrapFailed] ?? 0, 50, "\(codes)")
        print("JWE cross-check: \(decrypted) decrypted alike, \(refusedByBoth) mutations refused by both: \(codes)")
    }

    func testOtherAlgorithmPairsJoserfcWritesAreRefused() throws {
        let expected: [String: JOSEError.Code] = [
            "A128KW+A256GCM": .algorithmNotAllowed,
            "A192KW+A256GCM": .algorithmNotAllowed,
            "A256GCMKW+A256GCM": .algorithmNotAllowed,
            "dir+A256GCM": .algorithmNotAllowed,
            "A256KW+A128GCM": .encryptionNotAllowed,
            "A256KW+A256CBC-HS512": .encryptionNotAllowed,
            "A256KW+A256GCM+zip": .unsupportedCompression,
        ]
        let lines = try JoserfcPeer.run(["others", Base64URL.encode(JWETestToken.key)])
        XCTAssertEqual(Set(lines.compactMap { $0["name"] as? String }), Set(expected.keys))
        for line in lines {
            let name = try XCTUnwrap(line["name"] as? String)
            let token = try XCTUnwrap(line["token"] as? String)
            XCTAssertJOSEError(try XCTUnwrap(expected[name]), try JWE.decrypt(token, keyEncryptionKey: JWETestToken.key), name)
        }
    }
}

/// tests/jose/joserfc_jwe_peer.py run with CI's Python.
enum JoserfcPeer {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The peer's output, one JSON object per line.
    static func run(_ arguments: [String], input: Data? = nil) throws -> [[String: Any]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try python())
        process.arguments = [script.path] + arguments
        let output = Pipe(), errors = Pipe(), stdin = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(input) }
        try stdin.fileHandleForWriting.close()
        // Read stdout to its end before waiting: the peer writes more than a pipe buffer holds.
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw Failure(description: "joserfc_jwe_peer.py exited \(process.terminationStatus): \(stderr)")
        }
        return try data.split(separator: UInt8(ascii: "\n")).map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                throw Failure(description: "unreadable peer line \(String(decoding: line, as: UTF8.self))")
            }
            return object
        }
    }

    /// The Python with joserfc (CI's .venv, `bash .ci/run venv`). Unset is a failure, not a skip: this is the JWE
    /// reader's only independent check.
    private static func python() throws -> String {
        guard let python = ProcessInfo.processInfo.environment["KEYWARD_TEST_PYTHON"], !python.isEmpty else {
            XCTFail("KEYWARD_TEST_PYTHON is not set: point it at a Python with joserfc (bash .ci/run venv sets it to .venv/bin/python)")
            throw Failure(description: "KEYWARD_TEST_PYTHON is not set")
        }
        return python
    }

    /// Tests/KeywardJOSETests/ → repository root.
    private static var script: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("tests/jose/joserfc_jwe_peer.py")
    }
}
