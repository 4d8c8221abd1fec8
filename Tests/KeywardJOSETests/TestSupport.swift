// Test support: JOSE test helpers: an in-memory replay cache, error assertions, raw signing, and shared keys.
import Foundation
import XCTest
@testable import KeywardJOSE

/// An in-memory replay cache; the real one is a database table (Storage/).
actor MemoryReplayCache: DPoPReplayCache {
    private var seen: [String: Date] = [:]
    private(set) var recordCount = 0

    func recordOnce(jti: String, keyThumbprint: String, expiresAt: Date, now: Date) async throws -> Bool {
        recordCount += 1
        let key = keyThumbprint + "|" + jti
        if let expiry = seen[key], expiry > now { return false }
        seen[key] = expiresAt
        return true
    }
}

func XCTAssertJOSEError<T>(
    _ code: JOSEError.Code, _ expression: @autoclosure () throws -> T, _ context: String = "",
    file: StaticString = #filePath, line: UInt = #line
) {
    do {
        _ = try expression()
        XCTFail("expected JOSEError \(code.rawValue), got success \(context)", file: file, line: line)
    } catch let error as JOSEError {
        XCTAssertEqual(error.code, code, "\(context) message: \(error.message)", file: file, line: line)
    } catch {
        XCTFail("expected JOSEError \(code.rawValue), got \(error) \(context)", file: file, line: line)
    }
}

func b64(_ text: String) -> String { Base64URL.encode(Array(text.utf8)) }

func b64(_ bytes: [UInt8]) -> String { Base64URL.encode(bytes) }

func hexBytes(_ hex: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var iterator = hex.utf8.makeIterator()
    func nibble(_ c: UInt8) -> UInt8 {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        default: c - 0x41 + 10
        }
    }
    while let high = iterator.next(), let low = iterator.next() {
        bytes.append(nibble(high) << 4 | nibble(low))
    }
    return bytes
}

/// Signs hand-written header and payload JSON text byte for byte, to produce inputs our serializer never would.
func signRaw(header: String, payload: String, key: SigningKey) throws -> String {
    try JWS.sign(headerBytes: Array(header.utf8), payload: Array(payload.utf8), key: key)
}

/// Replaces one part of a compact JWS.
func replacingPart(_ compact: String, index: Int, with part: String) -> String {
    var parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    parts[index] = part
    return parts.joined(separator: ".")
}

func signaturePart(_ compact: String) -> [UInt8] {
    try! Base64URL.decode(compact.split(separator: ".", omittingEmptySubsequences: false)[2])
}

/// Test keys are generated once per process: RSA generation costs hundreds of milliseconds.
enum TestKeys {
    static let es256 = try! SigningKey.generate(.es256)
    static let es256Other = try! SigningKey.generate(.es256)
    static let es384 = try! SigningKey.generate(.es384)
    static let es512 = try! SigningKey.generate(.es512)
    static let rsa = try! SigningKey.generate(.rs256)
    static let rsaOther = try! SigningKey.generate(.rs256)
    static let edDSA = try! SigningKey.generate(.edDSA)

    static func key(for algorithm: JWSAlgorithm) -> SigningKey {
        switch algorithm {
        case .es256: es256
        case .es384: es384
        case .es512: es512
        case .edDSA: edDSA
        case .rs256, .rs384, .rs512, .ps256: try! SigningKey(algorithm: algorithm, serialized: rsa.serialized)
        }
    }
}
