// Tests: App Attest attestation verification on real iOS vectors, their mutations, and forged objects per step.
import AttestationTestSupport
import Crypto
import Foundation
import KeywardAttestation
import KeywardCBOR
import KeywardJOSE
import XCTest

/// App Attest attestation verification on the seven real iOS 14 vectors (development environment), their
/// mutations, and objects forged in the test for the steps the real vectors cannot reach.
final class AppAttestAttestationTests: XCTestCase {
    private func clientDataHash(_ vector: AppAttestVector) -> [UInt8] {
        Array(SHA256.hash(data: vector.attestationClientData))
    }

    private func verifier(_ vector: AppAttestVector, environment: AppAttestEnvironment = .development) -> AppAttestVerifier {
        AppAttestVerifier(appID: vector.appID, environment: environment)
    }

    private func assertRefused(
        _ reason: AttestationReason, file: StaticString = #filePath, line: UInt = #line,
        _ verification: () async throws -> AppAttestAttestation
    ) async {
        do {
            let result = try await verification()
            XCTFail("verified (key \(result.keyIDBase64)), expected \(reason.rawValue)", file: file, line: line)
        } catch let failure as AttestationFailure {
            XCTAssertEqual(failure.reason, reason, failure.detail, file: file, line: line)
        } catch {
            XCTFail("not an AttestationFailure: \(error)", file: file, line: line)
        }
    }

    /// Re-encodes a real object with its authData changed.
    private func withAuthData(_ object: [UInt8], _ change: (inout [UInt8]) -> Void) throws -> [UInt8] {
        let decoded = try CBORReader.decode(object)
        let entries = try XCTUnwrap(decoded.mapEntries).map { entry in
            guard entry.key == .text("authData"), case .bytes(var authData) = entry.value else { return entry }
            change(&authData)
            return CBORMapEntry(entry.key, .bytes(authData))
        }
        return CBORValue.map(entries).encoded
    }

    // MARK: Real vectors

    func testEveryRealAttestationVerifiesAtItsOwnTime() async throws {
        let vectors = try AppAttestVector.all()
        XCTAssertEqual(vectors.count, 7)
        for vector in vectors {
            XCTAssertEqual(vector.environment, "development")
            let result = try await verifier(vector).verifyAttestation(
                vector.attestation, clientDataHash: clientDataHash(vector), keyID: vector.keyID, at: vector.attestedAt
            )
            XCTAssertEqual(result.keyID, vector.keyID, vector.name)
            XCTAssertEqual(result.keyIDBase64, vector.keyIDBase64, vector.name)
            XCTAssertEqual(result.counter, 0)
            XCTAssertEqual(result.environment, .development)
            let recorded = try P256.Signing.PublicKey(pemRepresentation: vector.publicKeyPEM)
            XCTAssertEqual(result.publicKey.x963Representation, recorded.x963Representation, vector.name)
            XCTAssertEqual(result.jwk, try JWK(subjectPublicKeyInfo: Array(recorded.derRepresentation)))
            // The receipt is Apple's PKCS#7 in BER with indefinite lengths: SEQUENCE, length 0x80.
            XCTAssertEqual(Array(result.receipt.prefix(2)), [0x30, 0x80], vector.name)
            XCTAssertGreaterThan(result.receipt.count, 3000)
            XCTAssertNil(result.authenticatorDataTrailer, "iOS 14 writes no trailing map")
        }
    }

    func testKeyIDMayComeAsBase64OrNotAtAll() async throws {
        let vector = try XCTUnwrap(AppAttestVector.all().first)
        let withBase64 = try await verifier(vector).verifyAttestation(
            vector.attestation, clientDataHash: clientDataHash(vector), keyIDBase64: vector.keyIDBase64, at: vector.attestedAt
        )
        let without = try await verifier(vector).verifyAttestation(vector.attestation, clientDataHash: clientDataHash(vector), at: vector.attestedAt)
        XCTAssertEqual(withBase64.keyID, without.keyID)
        await assertRefused(.malformed) {
            try await verifier(vector).verifyAttestation(vector.attestation, clientDataHash: clientDataHash(vector), keyIDBase64: "not base64!", at: vector.attestedAt)
        }
    }

    func testReportIsTheJSONTheCLIPrints() async throws {
        let vector = try XCTUnwrap(AppAttestVector.all().last)
        let result = try await verifier(vector).verifyAttestation(vector.attestation, clientDataHash: clientDataHash(vector), at: vector.attestedAt)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: JSONEncoder().encode(result)) as? [String: Any])
        XCTAssertEqual(Set(json.keys), ["keyId", "publicKey", "counter", "environment", "receipt"])
        XCTAssertEqual(json["keyId"] as? String, vector.keyIDBase64)
        XCTAssertEqual(json["counter"] as? Int, 0)
        XCTAssertEqual(json["environment"] as? String, "development")
        XCTAssertEqual((json["receipt"] as? String).flatMap { Data(base64Encoded: $0) }.map(Array.init), result.receipt)
        let jwk = try XCTUnwrap(json["publicKey"] as? [String: String])
        XCTAssertEqual(jwk["kty"], "EC")
        XCTAssertEqual(jwk["crv"], "P-256")
        let point = Array(result.publicKey.x963Representation)
        XCTAssertEqual(jwk["x"], Base64URL.encode(Array(point[1..<33])))
        XCTAssertEqual(jwk["y"], Base64URL.encode(Array(point[33..<65])))
    }

    // MARK: Mutations of real vectors, each refused with its step's reason

    /// Every part of authData is under the certified nonce, but the parts a policy reads are judged before the
    /// chain and the nonce (security review, issue 16: no signature work for an object wrong in a plain field), so
    /// a flipped byte there is refused with that field's own reason, which names what is actually wrong. Before
    /// that reordering every flip here was NONCE_MISMATCH; the flags byte, which no field check reads, still is.
    func testAFlippedAuthDataByteIsRefusedByTheFieldItHits() async throws {
        let expected: [(position: Int, reason: AttestationReason)] = [
            (0, .rpIdMismatch), (31, .rpIdMismatch),  // rpIdHash
            (32, .nonceMismatch),  // flags: only the nonce covers them
            (36, .counterNotIncreasing),  // the counter's last byte: 1, not 0
            (40, .aaguidMismatch),
            (60, .keyIdMismatch),  // the credential id, no longer SHA-256 of the key
            (100, .keyIdMismatch),  // the COSE key's x coordinate, no longer the credential id's key
        ]
        for vector in try AppAttestVector.all() {
            for (position, reason) in expected {
                let mutated = try withAuthData(vector.attestation) { $0[position] ^= 0x01 }
                await assertRefused(reason) {
                    try await verifier(vector).verifyAttestation(mutated, clientDataHash: clientDataHash(vector), at: vector.attestedAt)
                }
            }
        }
    }

    func testAnotherClientDataHashBreaksTheNonce() async throws {
        let vector = try XCTUnwrap(AppAttestVector.all().first)
        await assertRefused(.nonceMismatch) {
            try await verifier(vector).verifyAttestation(vector.attestation, clientDataHash: Array(SHA256.hash(data: Array("wurzel".utf8))), at: vector.attestedAt)
        }
        // Apple's pitfall the other way round: the raw client data instead of its hash is refused outright.
        await assertRefused(.malformed) {
            try await verifier(vector).verifyAttestation(vector.attestation, clientDataHash: vector.attestationClientData, at: vector.attestedAt)
        }
    }

    func testAnotherTeamIDIsAnotherApp() async throws {
        for vector in try AppAttestVector.all() {
            let otherTeam = AppAttestVerifier(appID: "ABCDE12345" + vector.appID.drop { $0 != "." }, environment: .development)
            await assertRefused(.rpIdMismatch) {
                try await otherTeam.verifyAttestation(vector.attestation, clientDataHash: clientDataHash(vector), at: vector.attestedAt)
            }
        }
    }

    func testProductionPolicyRefusesDevelopmentAttestations() async throws {
        for vector in try AppAttestVector.all() {
            await assertRefused(.aaguidMismatch) {
                try await verifier(vector, environment: .production).verifyAttestation(
                    vector.attestation, clientDataHash: clientDataHash(vector), at: vector.attestedAt
                )
            }
        }
    }

    /// Leaf certificates live three days from a day before the attestation.
    func testOutsideTheLeafValidityTheChainIsInvalid() async throws {
        for vector in try AppAttestVector.all() {
            for time in [vector.attestedAt - 2 * 86_400, vector.attestedAt + 3 * 86_400, Date(timeIntervalSince1970: 0)] {
                await assertRefused(.chainInvalid) {
                    try await verifier(vector).verifyAttestation(vector.attestation, clientDataHash: clientDataHash(vector), at: time)
                }
            }
        }
    }

    func testAKeyIDThatIsNotTheAttestedKeysIsRefused() async throws {
        let vectors = try AppAttestVector.all()
        await assertRefused(.keyIdMismatch) {
            try await verifier(vectors[0]).verifyAttestation(
                vectors[0].attestation, clientDataHash: clientDataHash(vectors[0]), keyID: vectors[1].keyID, at: vectors[0].attestedAt
            )
        }
        await assertRefused(.malformed) {
            try await verifier(vectors[0]).verifyAttestation(
                vectors[0].attestation, clientDataHash: clientDataHash(vectors[0]), keyID: Array(vectors[0].keyID.prefix(16)), at: vectors[0].attestedAt
            )
        }
    }

    func testOtherFormatsAndShapesAreMalformed() async throws {
        let vector = try XCTUnwrap(AppAttestVector.all().first)
        let decoded = try CBORReader.decode(vector.attestation)
        func replacing(_ key: String, with value: CBORValue?) throws -> [UInt8] {
            let entries = try XCTUnwrap(decoded.mapEntries).compactMap { entry -> CBORMapEntry? in
                guard entry.key == .text(key) else { return entry }
                return value.map { CBORMapEntry(entry.key, $0) }
            }
            return CBORValue.map(entries).encoded
        }
        let statement = try XCTUnwrap(decoded["attStmt"])
        let x5c = try XCTUnwrap(statement["x5c"]?.arrayValue)
        let shapes: [String: [UInt8]] = [
            "packed format": try replacing("fmt", with: .text("packed")),
            "no fmt": try replacing("fmt", with: nil),
            "no authData": try replacing("authData", with: nil),
            "authData as text": try replacing("authData", with: .text("authData")),
            "empty x5c": try replacing("attStmt", with: .map([CBORMapEntry(.text("x5c"), .array([])), CBORMapEntry(.text("receipt"), .bytes([1]))])),
            "six certificates": try replacing("attStmt", with: .map([
                CBORMapEntry(.text("x5c"), .array(Array(repeating: x5c[0], count: 6))), CBORMapEntry(.text("receipt"), .bytes([1])),
            ])),
            "no receipt": try replacing("attStmt", with: .map([CBORMapEntry(.text("x5c"), .array(x5c))])),
            "certificate not DER": try replacing("attStmt", with: .map([
                CBORMapEntry(.text("x5c"), .array([.bytes([0x30, 0x03, 0x02, 0x01, 0x01])])), CBORMapEntry(.text("receipt"), .bytes([1])),
            ])),
            "an array": CBORValue.array([decoded]).encoded,
            "trailing bytes": vector.attestation + [0x00],
            "empty": [],
        ]
        for (name, object) in shapes {
            do {
                _ = try await verifier(vector).verifyAttestation(object, clientDataHash: clientDataHash(vector), at: vector.attestedAt)
                XCTFail("\(name) verified")
            } catch {
                XCTAssertEqual(error.reason, .malformed, "\(name): \(error)")
            }
        }
    }

    // MARK: A root inside x5c, and each step on forged objects

    /// A self-made CA with a correct credential certificate under it: everything verifies once that CA is pinned,
    /// and nothing does when only Apple's root is, although the CA travels in x5c.
    func testARootSuppliedInX5CIsNeverTrusted() async throws {
        let forged = try ForgedAppAttestation(time: Date(timeIntervalSince1970: 1_750_000_000))
        let object = try forged.object()
        let pinningTheForgery = AppAttestVerifier(appID: forged.appID, environment: .development, roots: PinnedRoots([forged.ca]))
        let accepted = try await pinningTheForgery.verifyAttestation(object, clientDataHash: forged.clientDataHash, keyID: forged.keyID, at: forged.time)
        XCTAssertEqual(accepted.keyID, forged.keyID)
        await assertRefused(.chainInvalid) {
            try await AppAttestVerifier(appID: forged.appID, environment: .development)
                .verifyAttestation(object, clientDataHash: forged.clientDataHash, keyID: forged.keyID, at: forged.time)
        }
    }

    private func verifyForged(_ forged: ForgedAppAttestation, environment: AppAttestEnvironment = .development) async throws(AttestationFailure) -> AppAttestAttestation {
        let verifier = AppAttestVerifier(appID: "6MURL8TA57.de.vincent-haupert.apple-appattest-poc", environment: environment, roots: PinnedRoots([forged.ca]))
        let object: [UInt8]
        do {
            object = try forged.object()
        } catch {
            throw AttestationFailure(.malformed, "test object: \(error)")
        }
        return try await verifier.verifyAttestation(object, clientDataHash: forged.clientDataHash, at: forged.time)
    }

    /// Apple's 2026 layout: a CBOR map after the COSE key, under the nonce like the rest of authData.
    func testATrailingMapAfterTheCOSEKeyIsReadAndVerified() async throws {
        var forged = try ForgedAppAttestation(time: Date(timeIntervalSince1970: 1_780_000_000))
        let trailer = CBORValue.map([
            CBORMapEntry(.text("apple_bundle_version_01"), .text("1")),
            CBORMapEntry(.text("apple_validation_category_01"), .bytes([1, 0, 0, 0])),
        ])
        forged.trailer = trailer
        let result = try await verifyForged(forged)
        XCTAssertEqual(result.authenticatorDataTrailer, trailer)
        XCTAssertEqual(result.keyID, forged.keyID)
    }

    /// The forged CA is pinned, so each object fails at its own step whether that step runs before the chain
    /// (the fields of authData) or after it (AppAttestCheckOrderTests tells which).
    func testEachStepRefusesWithItsReason() async throws {
        let time = Date(timeIntervalSince1970: 1_750_000_000)
        var forged = try ForgedAppAttestation(time: time)
        forged.appID = "ABCDE12345.de.vincent-haupert.apple-appattest-poc"
        await assertRefused(.rpIdMismatch) { try await verifyForged(forged) }

        forged = try ForgedAppAttestation(time: time)
        forged.counter = 1
        await assertRefused(.counterNotIncreasing) { try await verifyForged(forged) }

        forged = try ForgedAppAttestation(time: time)
        forged.aaguid = Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
        _ = try await verifyForged(forged, environment: .production)
        await assertRefused(.aaguidMismatch) { try await verifyForged(forged) }
        forged.aaguid = Array("appattestdevelo_".utf8)
        await assertRefused(.aaguidMismatch) { try await verifyForged(forged, environment: .production) }

        forged = try ForgedAppAttestation(time: time)
        forged.credentialID = Array(forged.keyID.reversed())
        await assertRefused(.keyIdMismatch) { try await verifyForged(forged) }
        forged.credentialID = Array(forged.keyID.prefix(16))
        await assertRefused(.keyIdMismatch) { try await verifyForged(forged) }

        forged = try ForgedAppAttestation(time: time)
        forged.coseKey = ForgedAppAttestation.coseKey(P256.Signing.PrivateKey().publicKey)
        await assertRefused(.keyIdMismatch) { try await verifyForged(forged) }
        forged.coseKey = .map([CBORMapEntry(.integer(1), .integer(2))])
        await assertRefused(.keyIdMismatch) { try await verifyForged(forged) }

        // authData that is not CBOR after the credential id, or has more than one map after the key.
        forged = try ForgedAppAttestation(time: time)
        forged.coseKey = .array([])
        await assertRefused(.malformed) { try await verifyForged(forged) }
        forged.coseKey = nil
        forged.trailer = .text("not a map")
        await assertRefused(.malformed) { try await verifyForged(forged) }
    }
}
