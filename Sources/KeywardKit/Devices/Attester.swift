// What an installation's platform says about its key at registration, and what became of it.
import KeywardJOSE

/// What the installation's platform says about its key, sent as the registration's `attestation` member. The
/// server judges it (or its absence) by the app's policy; the installation only gathers it.
///
/// The attestation is bound to the registration through the binding nonce, SHA-256(challenge ‖ public_key) of the
/// exact strings the registration sends. `AppAttestAttester` (Apple platforms) passes it to App Attest as the
/// `clientDataHash`; ``NoAttestation`` sends none.
public protocol Attester: Sendable {
    /// The `attestation` member for a registration whose binding nonce is `bindingNonce` (32 bytes), or nil to
    /// send none. The registrar waits for it at most its attestation timeout, and treats an error like nil.
    func attestation(bindingNonce: [UInt8]) async throws -> JSONObject?
}

/// Sends no attestation: for platforms without one (Linux, keyward-device) and tests. The server's app must then
/// accept a missing attestation (`keyward apps add … --missing-attestation accept`, or `pending` for an operator
/// to decide).
public struct NoAttestation: Attester {
    public init() {}

    public func attestation(bindingNonce: [UInt8]) async throws -> JSONObject? {
        nil
    }
}

/// What became of the attestation of one registration attempt.
public enum AttestationOutcome: Sendable, Equatable {
    /// The attester gave an attestation of this `type` (its `type` member) and it was sent.
    case sent(type: String)
    /// The attester offers none (``NoAttestation``); nothing was sent.
    case none
    /// The attester failed (its error, described); the registration went on without an attestation.
    case failed(String)
    /// The attester gave no answer within the timeout; the registration went on without an attestation.
    case timedOut(after: Duration)
}
