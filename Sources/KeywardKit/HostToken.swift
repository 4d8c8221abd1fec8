// The pre-check of a host token before it is sent: the shape and the three claims the exchange cannot do without.
// Signature and claim values are the server's to verify (issue 15); this only keeps a token that is sure to be
// refused off the network and names what is wrong with it.
import Foundation
import KeywardJOSE

/// A host-signed JWT that passed KeywardKit's pre-validation: three base64url parts with a signature, a payload
/// that is a JSON object holding `iss`, `sub` and `exp`, and an `exp` not yet past.
///
/// Nothing here is verified: the signature, the issuer, the audience, the lifetime and the `jti` are checked by
/// Keyward when the token is exchanged. The check only stops a token that is sure to be refused before it costs a
/// request, with a ``KeywardKitError/invalidHostToken(_:)`` naming the problem.
public struct HostToken: Sendable, Equatable {
    /// The clock skew tolerated on `exp`, in seconds: as much as a Keyward issuer tolerates by default, so a token
    /// the server would still take is not refused because the device's clock runs ahead.
    public static let defaultLeeway: TimeInterval = 30

    /// The token as the signer returned it (`header.payload.signature`).
    public let compact: String
    /// The `iss` claim: the host app's auth provider as registered in the realm.
    public let issuer: String
    /// The `sub` claim: the user's enterprise id, as enrolled.
    public let subject: String
    /// The `exp` claim.
    public let expiresAt: Date
    /// The server's cap on a host token (8 KiB): a larger one is refused here, before any network call.
    public static let maxSize = 8 * 1024

    /// Pre-validates `compact`. It is refused when it is not three base64url parts (`header.payload.signature`,
    /// with a non-empty signature and a header and payload that are JSON objects), when `iss`, `sub` or `exp` is
    /// missing or of the wrong type, or when `exp` is at or before `now` less `leeway`.
    public init(_ compact: String, now: Date, leeway: TimeInterval = HostToken.defaultLeeway) throws(KeywardKitError) {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .invalidHostToken(.notThreeParts(found: parts.count)) }
        // KeywardJOSE does the reading (docs/ARCHITECTURE.md §4: no JWS parsing outside it); its messages name the part.
        let jws: JWS
        let claims: JSONObject
        do throws(JOSEError) {
            jws = try JWS.parse(compact, maxSize: Self.maxSize)
            claims = try jws.claims()
        } catch {
            throw .invalidHostToken(.malformed(error.message))
        }
        guard !jws.signature.isEmpty else { throw .invalidHostToken(.unsigned) }
        self.compact = compact
        self.issuer = try Self.string("iss", in: claims)
        self.subject = try Self.string("sub", in: claims)
        guard let expValue = claims["exp"] else { throw .invalidHostToken(.missingClaim("exp")) }
        guard let exp = expValue.numberValue, exp.isFinite else {
            throw .invalidHostToken(.invalidClaim("exp", "is not a number of seconds since 1970 (RFC 7519 §4.1.4)"))
        }
        let expiresAt = Date(timeIntervalSince1970: exp)
        guard expiresAt.addingTimeInterval(leeway) > now else { throw .invalidHostToken(.expired(at: expiresAt, now: now)) }
        self.expiresAt = expiresAt
    }

    private static func string(_ name: String, in claims: JSONObject) throws(KeywardKitError) -> String {
        guard let value = claims[name] else { throw .invalidHostToken(.missingClaim(name)) }
        guard let string = value.stringValue else { throw .invalidHostToken(.invalidClaim(name, "is not a string")) }
        guard !string.isEmpty else { throw .invalidHostToken(.invalidClaim(name, "is empty")) }
        return string
    }
}

/// What KeywardKit's pre-validation found wrong with a host token (``HostToken``); the token was not sent.
public enum HostTokenProblem: Sendable, Equatable, CustomStringConvertible {
    /// Not `header.payload.signature`: `found` dot-separated parts instead of three.
    case notThreeParts(found: Int)
    /// Three parts, but one does not read: not base64url, or a header or payload that is not a JSON object. The
    /// message names the part.
    case malformed(String)
    /// The signature part is empty: an unsecured JWT (`alg: none`), which Keyward never accepts.
    case unsigned
    /// A claim the exchange needs (`iss`, `sub` or `exp`) is absent.
    case missingClaim(String)
    /// A claim is present with a value that cannot be right (the claim, and what is wrong with it).
    case invalidClaim(String, String)
    /// `exp` is past, beyond the leeway.
    case expired(at: Date, now: Date)

    /// One line naming the problem.
    public var description: String {
        switch self {
        case .notThreeParts(let found): "a JWT has three dot-separated parts (header.payload.signature); this one has \(found)"
        case .malformed(let message): message
        case .unsigned: "the signature part is empty (an unsigned JWT)"
        case .missingClaim(let name): "claim \"\(name)\" is required"
        case .invalidClaim(let name, let problem): "claim \"\(name)\" \(problem)"
        case .expired(let at, let now):
            "expired at \(Self.format(at)) (now \(Self.format(now)))"
        }
    }

    private static func format(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }
}
