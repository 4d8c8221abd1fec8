// Tests: a DPoP proof's signature is accepted in exactly one encoding and only by the embedded key.
import XCTest
@testable import KeywardJOSE

/// RFC 9449 §4.3 step 6: the signature, in exactly one encoding, by exactly the embedded key.
final class DPoPSignatureTests: DPoPTestCase {
    /// Order of the P-256 group, for building the malleated (high-S) twin of a signature.
    private let p256Order = hexBytes("FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551")

    private func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: a.count)
        var borrow = 0
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            var value = Int(a[i]) - Int(b[i]) - borrow
            borrow = value < 0 ? 1 : 0
            if value < 0 { value += 256 }
            result[i] = UInt8(value)
        }
        return result
    }

    private func derInteger(_ bytes: [UInt8]) -> [UInt8] {
        var body = Array(bytes.drop(while: { $0 == 0 }))
        if body.isEmpty || body[0] & 0x80 != 0 { body.insert(0, at: 0) }
        return [0x02, UInt8(body.count)] + body
    }

    private func withSignature(_ proof: String, _ signature: [UInt8]) -> String {
        replacingPart(proof, index: 2, with: b64(signature))
    }

    func testBitFlipRejected() async throws {
        let proof = try makeProof()
        var signature = signaturePart(proof)
        signature[10] ^= 0x01
        await reject(withSignature(proof, signature), "bad_signature")
        // Same signature over a payload that differs only in the jti.
        let other = try makeProof(jti: "jti-2")
        await reject(replacingPart(try makeProof(jti: "jti-3"), index: 2, with: String(other.split(separator: ".")[2])), "bad_signature")
    }

    func testSignatureByAnotherKeyRejected() async throws {
        let mine = try makeProof()
        let theirs = try makeProof(key: TestKeys.es256Other)
        await reject(withSignature(mine, signaturePart(theirs)), "bad_signature")
    }

    func testDEREncodedSignatureRejected() async throws {
        let proof = try makeProof()
        let raw = signaturePart(proof)
        let body = derInteger(Array(raw[..<32])) + derInteger(Array(raw[32...]))
        await reject(withSignature(proof, [0x30, UInt8(body.count)] + body), "bad_signature")
    }

    func testWrongLengthRejected() async throws {
        let proof = try makeProof()
        let raw = signaturePart(proof)
        await reject(withSignature(proof, Array(raw.dropLast())), "bad_signature")
        await reject(withSignature(proof, raw + [0]), "bad_signature")
        await reject(withSignature(proof, [0] + raw), "bad_signature")
        await reject(withSignature(proof, []), "bad_signature")
    }

    func testZeroAndOutOfRangeScalarsRejected() async throws {
        let proof = try makeProof()
        await reject(withSignature(proof, [UInt8](repeating: 0, count: 64)), "bad_signature")
        await reject(withSignature(proof, p256Order + p256Order), "bad_signature")
        let raw = signaturePart(proof)
        await reject(withSignature(proof, Array(raw[..<32]) + p256Order), "bad_signature")
    }

    func testHighSTwinIsRejectedAsReplay() async throws {
        let proof = try makeProof(jti: "twin")
        let raw = signaturePart(proof)
        let twin = withSignature(proof, Array(raw[..<32]) + subtract(p256Order, Array(raw[32...])))
        XCTAssertNotEqual(twin, proof)
        // The twin is a mathematically valid signature: only the jti cache stops it.
        await accept(twin)
        let (verifier, _) = makeVerifier()
        await accept(proof, verifier: verifier)
        await reject(twin, "replayed", verifier: verifier)
    }

    func testRejectedProofsNeverReachTheReplayCache() async throws {
        let (verifier, cache) = makeVerifier()
        var signature = signaturePart(try makeProof())
        signature[0] ^= 0x80
        await reject(withSignature(try makeProof(), signature), "bad_signature", verifier: verifier)
        await reject(try makeProof(method: "GET"), "htm_mismatch", verifier: verifier)
        let recorded = await cache.recordCount
        XCTAssertEqual(recorded, 0)
    }

    func testEveryAlgorithmAccepted() async throws {
        for algorithm in JWSAlgorithm.allCases {
            await accept(try makeProof(key: TestKeys.key(for: algorithm)))
        }
    }
}
