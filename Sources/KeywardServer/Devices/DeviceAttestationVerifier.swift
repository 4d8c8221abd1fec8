// How a registration's attestation is judged by its app's settings, and what a verified one leaves behind.
import Foundation
import KeywardAttestation
import KeywardJOSE

/// Judges the attestation an installation sent for the key it registers, by its app's settings.
protocol DeviceAttestationVerifier: Sendable {
    func verify(
        _ attestation: RegistrationRequest.Attestation, app: DeviceApp, binding: BindingNonce, publicKey: [UInt8], now: Date
    ) async throws(AttestationFailure) -> VerifiedAttestation
}

/// What a verified attestation leaves on the device record.
struct VerifiedAttestation: Sendable, Equatable {
    /// For operators and audits: the type, the binding form that matched, and what the platform said.
    var summary: JSONObject
    /// App Attest: the attested key, which signs the installation's assertions.
    var appAttestKeyId: String? = nil
    var appAttestPublicKey: [UInt8]? = nil
}
