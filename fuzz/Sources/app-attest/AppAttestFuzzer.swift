// Fuzzes App Attest attestation verification on mutated real objects at fixed times: no trap, and nothing verifies
// unless its signed parts (authData and the credential certificate) are byte for byte those of a real attestation,
// and never under the production policy (the vectors are development attestations).
import Crypto
import Foundation
import FuzzSupport
import KeywardAttestation

/// The seven iOS 14 vectors of Tests/Fixtures/app-attest (the seeds, see seeds.py): when each was made, and
/// SHA-256 of its authData and of its credential certificate's DER.
let vectors: [(madeAt: Double, authData: String, credentialCertificate: String)] = [
    (1_605_996_780.187, "89c6f8d4bcb01ae91c489691a10ef6cf5d530b2b86863cf01d2055fe96d3057d", "6d9d833f69c8c03c694dfe5a65828d37559d2bb519bc03e3e6c51471af8a6485"),
    (1_606_038_490.278, "85032d5dd69246df0b3e3f6d0dbe61d9d5c834c06cf8836b5638809ff9b950e0", "1ea81524b9e10242031f4f25377bc9157691482e5c52d328e3c8be7cf7691ab4"),
    (1_606_949_112.101, "8e7cdd4457055bb35a8ae97868327463001e1e234562a2b17c46028ac3e8f548", "aea68a34abd7366e13a6b82f7eba605fc73b71262cc4bf9b78d58331e3e1ae6a"),
    (1_608_379_862.163, "57487d913c9fd809516c381613953724a8a25adadc3eb798b4cba96108acbb61", "74be053bfbc921ae3f4efaa88c5c429c26744a29cba99a6a9dd08f36499d544f"),
    (1_610_234_572.659, "8dc7972c96e518ae6189a2ec944b20b5abb5027a9abb95b533dd9397c0894c81", "ae5c605762f9c28e864b4f020030210b42672b7ba3d0eb13c5e3da37c86ccae4"),
    (1_611_181_310.667, "c31ecbae57573b0563ad8d73fae1e180627d0820f04117eed4e9c6927a1b7388", "7f762e5abe594f778e598c6eec5ffa1086cf724edddc92a9fee1e2efe49f576f"),
    (1_611_404_013.335, "87799bea11c51ff1f3648e743b48795c8f4bcbf8629aaaa558fc74cd30921e1f", "dbb0dfde224848681b080e451581c59ffd3eba8c0168246933bb3afe2b20af78"),
]
let clientDataHash = Array(SHA256.hash(data: Array("wurzelpfropf".utf8)))
let development = AppAttestVerifier(appID: "6MURL8TA57.de.vincent-haupert.apple-appattest-poc", environment: .development)
let production = AppAttestVerifier(appID: "6MURL8TA57.de.vincent-haupert.apple-appattest-poc", environment: .production)

func hex(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}

/// Input: options byte, then an attestation object. Options: the value modulo 7 picks the vector whose time
/// the object is verified at; bit 7 the production policy instead of development.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (options, rest) = FuzzInput(data, size).optionsAndRest
    let object = Array(rest)
    let time = Date(timeIntervalSince1970: vectors[Int(options & 0x7F) % vectors.count].madeAt)
    let verifier = options & 0x80 != 0 ? production : development
    let verdict = runSynchronously { () async -> Result<AppAttestAttestation, AttestationFailure> in
        do throws(AttestationFailure) {
            return .success(try await verifier.verifyAttestation(object, clientDataHash: clientDataHash, at: time))
        } catch {
            return .failure(error)
        }
    }
    guard case .success(let result) = verdict else { return 0 }

    expect(verifier.environment == .development, "a development attestation verified under the production policy")
    expect(result.counter == 0 && result.environment == .development, "verified with counter \(result.counter), \(result.environment)")
    guard let parsed = try? AppAttestAttestationObject(cbor: object), let leaf = parsed.certificatesDER.first else {
        expectationFailed("a verified object does not parse again")
    }
    let signedParts = (hex(SHA256.hash(data: parsed.authenticatorData.bytes)), hex(SHA256.hash(data: leaf)))
    expect(vectors.contains { $0.authData == signedParts.0 && $0.credentialCertificate == signedParts.1 },
           "verified an object whose authData or credential certificate is not a real attestation's")
    expect(result.keyID == Array(SHA256.hash(data: result.publicKey.x963Representation)), "key id is not the key's")
    return 0
}
