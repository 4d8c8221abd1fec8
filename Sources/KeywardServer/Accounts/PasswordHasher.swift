// Hashing and verifying passwords with bcrypt over a keyed pre-hash, legacy hashes still accepted.
import Crypto
import Foundation
import HummingbirdBcrypt

/// Password hashes: bcrypt over a keyed pre-hash of the password.
///
/// bcrypt reads at most 72 bytes and silently ignores the rest, so two long passwords sharing their first 72
/// bytes would be the same password. Every password is first reduced to HMAC-SHA-256 under a key derived from
/// the master key, base64-encoded (44 bytes, never a NUL, which bcrypt would also stop at), and that is what
/// bcrypt hashes. Keyed rather than a plain SHA-256, so a stolen table cannot be "shucked" by testing leaked
/// unsalted SHA-256 hashes of passwords against it without the master key as well.
///
/// Hashes stored before this scheme (bare bcrypt of the password) still verify, and report that they should be
/// replaced: `UserService` rewrites them on the owner's next successful sign-in.
struct PasswordHasher: Sendable {
    /// Marks a stored hash as bcrypt of the keyed pre-hash; anything else is a bare bcrypt hash.
    static let prefix = "hmac-sha256$"
    /// HKDF `info` of the pre-hash key; a new scheme would get a new prefix and purpose.
    static let keyPurpose = "keyward password pre-hash v1"

    private let key: SymmetricKey
    let cost: UInt8

    init(key: SymmetricKey, cost: UInt8) {
        self.key = key
        self.cost = cost
    }

    enum Verdict: Equatable, Sendable {
        case matches
        /// Matches a hash stored the old way; store `hash(password)` in its place.
        case matchesLegacy
        case doesNotMatch
    }

    func hash(_ password: String) -> String {
        Self.prefix + Bcrypt.hash(preHashed(password), cost: cost)
    }

    func verify(_ password: String, against stored: String) -> Verdict {
        if stored.hasPrefix(Self.prefix) {
            return Bcrypt.verify(preHashed(password), hash: String(stored.dropFirst(Self.prefix.count))) ? .matches : .doesNotMatch
        }
        return Bcrypt.verify(password, hash: stored) ? .matchesLegacy : .doesNotMatch
    }

    private func preHashed(_ password: String) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Array(password.utf8), using: key)).base64EncodedString()
    }
}
