// Verifying a Play Integrity token for one app: decode it, then run the policy's checks in order.
import Foundation
import KeywardJOSE

/// Verifies a Play Integrity token for one app (reference §3.3): the decoder authenticates it and gives the verdict,
/// then the policy's checks run in this order, a refusal carrying the reason of the first that failed: request
/// package, nonce, timestamp, app recognition, app identity (package and signing certificate), device integrity.
///
/// Pure with the local decoder: the token, the policy and an explicit verification time in, a verdict out.
public struct PlayIntegrityVerifier: Sendable {
    public let decoder: any PlayIntegrityDecoder

    public init(decoder: any PlayIntegrityDecoder) {
        self.decoder = decoder
    }

    /// Local decoding with the app's keys from Play Console (see `PlayIntegrityLocalDecoder`).
    public init(decryptionKey: String, verificationKey: String) throws(AttestationFailure) {
        self.decoder = try PlayIntegrityLocalDecoder(decryptionKey: decryptionKey, verificationKey: verificationKey)
    }

    public func verify(_ token: String, policy: PlayIntegrityPolicy, at time: Date) async throws(AttestationFailure) -> PlayIntegrityResult {
        let payload = try await decoder.decode(token, at: time)
        let decoding = AttestationCheck("decoding", .passed, decoder.source == .local
            ? "decrypted with the decryption key, ES256 signature verified with the verification key"
            : "decoded by Google's decodeIntegrityToken")
        return try Self.judge(PlayIntegrityVerdict(payload: payload), policy: policy, at: time, source: decoder.source, decoding: decoding)
    }

    /// The policy's checks on a verdict already authenticated.
    static func judge(
        _ verdict: PlayIntegrityVerdict, policy: PlayIntegrityPolicy, at time: Date, source: PlayIntegritySource,
        decoding: AttestationCheck
    ) throws(AttestationFailure) -> PlayIntegrityResult {
        var checks = [decoding]
        for rule in policy.rules {
            checks.append(try rule.check(verdict, at: time))
        }
        return PlayIntegrityResult(verdict: verdict, source: source, verifiedAt: time, checks: checks)
    }
}
