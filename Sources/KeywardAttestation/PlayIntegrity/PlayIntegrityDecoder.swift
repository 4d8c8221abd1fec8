import Foundation
import KeywardJOSE

/// Turns an integrity token into its verdict payload, authenticated: locally with the app's own keys
/// (`PlayIntegrityLocalDecoder`), or by Google's decodeIntegrityToken (the server's remote decoder). The verdict
/// checks are the same whoever decoded.
public protocol PlayIntegrityDecoder: Sendable {
    /// Who decoded, for the report.
    var source: PlayIntegritySource { get }

    /// The verdict payload of an authentic token: `UNDECRYPTABLE`, `SIGNATURE_INVALID` or `MALFORMED` when the
    /// token is not one, `VERIFIER_UNAVAILABLE` when the decoder cannot tell.
    func decode(_ token: String, at time: Date) async throws(AttestationFailure) -> JSONObject
}

public enum PlayIntegritySource: String, Sendable, Encodable {
    /// Decrypted and verified here with the keys from Play Console (classic requests).
    case local = "LOCAL"
    /// Decoded by Google's decodeIntegrityToken.
    case google = "GOOGLE"
}

/// What any decoder checks before decoding: a token within the size limit, written in the compact
/// serialization's characters and shaped as the JWE integrity tokens are, so that nothing else is ever sent to
/// Google or decoded.
public enum PlayIntegrityToken {
    /// Real tokens are a few kilobytes; the JWE reader's limit.
    public static let maxSize = JWE.defaultMaxSize

    public static func checkShape(_ token: String) throws(AttestationFailure) {
        let utf8 = token.utf8
        guard !utf8.isEmpty else { throw AttestationFailure(.malformed, "the integrity token is empty") }
        guard utf8.count <= maxSize else {
            throw AttestationFailure(.malformed, "the integrity token is \(utf8.count) bytes; the limit is \(maxSize)")
        }
        let allowed = utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                true
            default:
                false
            }
        }
        guard allowed else { throw AttestationFailure(.malformed, "the integrity token has characters outside base64url and '.'") }
        // Integrity tokens, classic and standard, are A256KW/A256GCM JWEs: anything else is refused here, before a
        // call to Google is spent on it (second security review M1).
        do throws(JOSEError) {
            try JWE.checkStructure(token, maxSize: maxSize)
        } catch {
            throw AttestationFailure(.malformed, "the integrity token is not an A256KW/A256GCM JWE: \(error.message)")
        }
    }
}
