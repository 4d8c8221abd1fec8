// A hand-off: what the broker gives an app once, under a code that went through the system browser.
import Crypto
import Foundation
import KeywardJOSE

/// One hand-off (issue 29): a delegation for the app's session key (or a relay client's own blob), waiting for the
/// app to take it with the code and nonce the browser brought back and a DPoP proof by the key it names. Only the
/// code's and the nonce's SHA-256 are stored: a copy of the table takes nothing.
struct Handoff: Sendable, Equatable {
    enum Kind: String, Sendable {
        /// A realm-signed delegation for the session key, issued by the relay.
        case delegation
        /// A relay client's own format (an Internet Identity delegation chain, say), stored through the API.
        case blob
    }

    var codeHash: String
    var realm: String
    var clientId: String
    var nonceHash: String
    /// The thumbprint (RFC 7638) of the key that may take it.
    var jkt: String
    var kind: Kind
    var blob: String
    var createdAt: Date
    var expiresAt: Date

    /// A code's or nonce's stored form.
    static func digest(_ secret: String) -> String {
        Base64URL.encode(Array(SHA256.hash(data: Array(secret.utf8))))
    }
}

protocol HandoffStore: Sendable {
    /// Stores it unless its client already has `maxLive` hand-offs waiting; false then.
    func insert(_ handoff: Handoff, maxLive: Int, now: Date) async throws -> Bool
    /// Deletes and returns the hand-off of this code that the key `jkt` may take, in one statement: of concurrent
    /// takers, one gets it. A hand-off for another key stays.
    func take(realm: String, codeHash: String, jkt: String) async throws -> Handoff?
    /// Deletes the realm's hand-offs waiting for the key `jkt` (a removed device's); returns how many.
    func deleteAll(realm: String, jkt: String) async throws -> Int
    /// Deletes the hand-offs past their expiry; returns how many.
    func deleteExpired(now: Date) async throws -> Int
}
