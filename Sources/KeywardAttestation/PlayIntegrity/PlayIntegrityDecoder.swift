// How an integrity token becomes an authenticated verdict payload, and the shape every token must have first.
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

/// What any decoder checks before decoding, so that nothing else is ever sent to Google or decoded: a token of a
/// real token's size, written in the compact serialization's characters, whose dot-separated parts are each
/// non-empty strict base64url. Google documents classic tokens as A256KW/A256GCM JWEs (the local decoder checks that
/// in full) and standard ones as opaque, so no more is assumed of a token sent to Google: the budget in front of
/// it is what bounds the calls (second security review M1).
public enum PlayIntegrityToken {
    /// Real tokens are a few kilobytes; the JWE reader's limit.
    public static let maxSize = JWE.defaultMaxSize
    /// A verdict signed (ES256) and encrypted is well over a kilobyte; nothing shorter than this is a token.
    public static let minSize = 256

    public static func checkShape(_ token: String) throws(AttestationFailure) {
        let utf8 = token.utf8
        guard utf8.count >= minSize else {
            throw AttestationFailure(.malformed, "the integrity token is \(utf8.count) bytes; a real one is at least \(minSize)")
        }
        guard utf8.count <= maxSize else {
            throw AttestationFailure(.malformed, "the integrity token is \(utf8.count) bytes; the limit is \(maxSize)")
        }
        for part in token.split(separator: ".", omittingEmptySubsequences: false) {
            do throws(JOSEError) {
                guard !part.isEmpty else { throw JOSEError(.malformed, "an empty part") }
                _ = try Base64URL.decode(part)
            } catch {
                throw AttestationFailure(.malformed, "the integrity token is not dot-separated base64url: \(error.message)")
            }
        }
    }
}
