// DeviceCheck also exists on watchOS, where App Attest does not.
#if canImport(DeviceCheck) && (os(iOS) || os(macOS))
import DeviceCheck
import Foundation
import KeywardJOSE

/// Apple App Attest: a new App Attest key from `DCAppAttestService`, attested with the registration's binding
/// nonce as `clientDataHash` (the form Keyward's server checks first), sent as
/// `{"type": "app-attest", "keyId", "object"}`; afterwards, assertions by that key sign the device's requests.
///
/// Answers nil where App Attest is not supported (the simulator, some Macs); its errors reach the registrar, which
/// registers without an attestation all the same. What a registration without one becomes is the app's policy on
/// the server (`--missing-attestation`, `--failed-attestation`), never the device's decision.
public struct AppAttestAttester: Attester, Asserter {
    public init() {}

    public func attestation(bindingNonce: [UInt8]) async throws -> JSONObject? {
        let service = DCAppAttestService.shared
        guard service.isSupported else { return nil }
        // A key per attempt: each attempt has a challenge of its own, and the server keeps the key id of the
        // attestation it accepted (its assertions later name that key).
        let keyId = try await service.generateKey()
        let object = try await service.attestKey(keyId, clientDataHash: Data(bindingNonce))
        return ["type": "app-attest", "keyId": .string(keyId), "object": .string(object.base64EncodedString())]
    }

    /// `generateAssertion`: the Secure Enclave signs with the attested key and advances its counter. A key the
    /// system no longer has fails with `DCError.invalidKey`.
    public func assertion(keyId: String, clientDataHash: [UInt8]) async throws -> [UInt8] {
        Array(try await DCAppAttestService.shared.generateAssertion(keyId, clientDataHash: Data(clientDataHash)))
    }
}
#endif
