// The nonce that ties a platform attestation to one registration, in the forms installations pass it.
import Crypto
import Foundation
import KeywardJOSE

/// What ties a platform attestation to one registration: SHA-256(challenge ‖ public_key), both as the strings the
/// installation sent (the challenge as received, the key's base64 as written in the request — never re-encoded,
/// or a client that pads differently would never match).
///
/// Installations hand it to their platform in the forms below; each form is named after who sends it, and a
/// verifier tries them in this order.
struct BindingNonce: Sendable, Equatable {
    let digest: [UInt8]

    init(challenge: String, publicKey: String) {
        digest = Array(SHA256.hash(data: Array(challenge.utf8) + Array(publicKey.utf8)))
    }

    /// The 32 bytes an App Attest installation may have passed as `clientDataHash`.
    enum AppAttestForm: String, CaseIterable, Sendable {
        /// KeywardKit: the binding nonce itself.
        case keyward
        /// Synheart's iOS SDK: SHA-256 of the nonce written as lowercase hex.
        case hexHashed = "hex-hashed"
    }

    func clientDataHash(_ form: AppAttestForm) -> [UInt8] {
        switch form {
        case .keyward: digest
        case .hexHashed: Array(SHA256.hash(data: Array(HexDigit.lowercase(digest).utf8)))
        }
    }

    /// The classic Play Integrity request nonce (web-safe base64 without padding, as Play requires; Synheart's
    /// Android SDK sends this).
    var playIntegrityNonce: String {
        Data(digest).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
