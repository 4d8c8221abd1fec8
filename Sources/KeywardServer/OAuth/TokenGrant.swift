// How other parts plug extension grants into the realm's token endpoint.
import Foundation
import KeywardJOSE
import Synchronization

/// An extension grant (RFC 6749 §4.5) that another part answers at this realm's token endpoint, such as the
/// jwt-bearer grant of host-signed tokens (RFC 7523). The endpoint identifies the client, asks the grant whom the
/// token is for, verifies the DPoP proof, and only then spends what the grant marked single-use, so a request
/// refused for its proof does not burn the assertion it carried.
protocol TokenGrant: Sendable {
    /// The `grant_type` value it answers.
    var grantType: String { get }
    /// For an assertion grant (RFC 7521) that several parts answer: the assertion's JWT `typ` this one takes; nil for
    /// the grant that takes every other assertion.
    var assertionType: String? { get }
    func authorize(_ request: TokenGrantRequest) async throws(OAuthFailure) -> TokenGrantDecision
}

extension TokenGrant {
    var assertionType: String? { nil }
}

struct TokenGrantRequest: Sendable {
    let realm: Realm
    /// Identified: authenticated by its secret when confidential, named by `client_id` when public.
    let client: OAuthClient
    /// The decoded form, `grant_type` and client credentials included.
    let form: [String: String]
    let now: Date
}

struct TokenGrantDecision: Sendable {
    /// Something that may be used once (an assertion's `jti`), recorded in the replay cache until `expiresAt`.
    struct SingleUse: Sendable {
        let scope: String
        let key: String
        let expiresAt: Date
        /// Called only when it was used before (so the grant counts it, or revokes what the first use gave): the
        /// answer to give. Built then, not on every request.
        let replayed: @Sendable () async -> OAuthFailure
    }

    /// The access token's `sub`.
    var subject: String
    /// A DPoP proof is required (the client's own setting may require one anyway).
    var requiresDPoP: Bool
    var singleUse: SingleUse?
    /// The proof key the grant is bound to (an assertion's `cnf.jkt`), and the answer when the proof's differs.
    /// A bound grant always needs a proof, whatever `requiresDPoP` says.
    var boundThumbprint: (thumbprint: String, refusal: OAuthFailure)? = nil
    /// The access token's scope, when the grant decides it (an authorization code carries what the person
    /// consented to); nil: the requested scope, within the client's.
    var scope: String? = nil
    /// Claims the access token carries beside the endpoint's own (`auth_time`, `acr`, `sid`).
    var accessTokenClaims: JSONObject = [:]
    /// The token acts for the person `subject` names: bound to a registered device's key, it names the device
    /// (`device_id`, …) and makes the device the person's; a removed device's key gets nothing. False for a client
    /// acting for itself.
    var actsForPerson = true
    /// Runs once the access token is signed, and adds to the answer (a refresh token, an id_token); a failure
    /// here refuses the request.
    var finish: (@Sendable (TokenGrantIssued) async throws(OAuthFailure) -> TokenGrantExtras)? = nil
}

/// What the endpoint issued, for a grant's `finish`.
struct TokenGrantIssued: Sendable {
    let client: OAuthClient
    let accessToken: String
    /// The proof key's thumbprint, when the token is bound to one.
    let jkt: String?
    let now: Date
}

/// What a grant adds to the token response.
struct TokenGrantExtras: Sendable {
    var refreshToken: String?
    var idToken: String?
}

/// The extension grants other parts plug into the token endpoint while they are assembled (host tokens' jwt-bearer
/// grant today), so OAuth names none of them.
final class TokenGrants: Sendable {
    private let grants = Mutex<[any TokenGrant]>([])

    func add(_ grant: any TokenGrant) { grants.withLock { $0.append(grant) } }

    var all: [any TokenGrant] { grants.withLock { $0 } }
}
