// What an App Attest key signed over with its authenticator data: the client data or its hash.
import Crypto

/// What the app signed over together with its authenticator data: the client data itself, whose SHA-256 the
/// verifier computes, or that hash when the caller derived it (for example the Synheart SDK's double hash).
public enum AppAttestClientData: Sendable, Hashable {
    case data([UInt8])
    case hash([UInt8])

    /// The 32-byte clientDataHash: a hash of another length is a caller's mistake, refused as malformed.
    func clientDataHash() throws(AttestationFailure) -> [UInt8] {
        switch self {
        case .data(let data):
            return Array(SHA256.hash(data: data))
        case .hash(let hash):
            guard hash.count == 32 else {
                throw AttestationFailure(.malformed, "the client data hash has \(hash.count) bytes, not 32")
            }
            return hash
        }
    }
}
