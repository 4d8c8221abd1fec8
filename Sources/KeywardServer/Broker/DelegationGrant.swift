// A delegation exchanged at the token endpoint for tokens bound to its session key.
import Foundation
import KeywardJOSE

/// The JWT bearer grant (RFC 7523 §2.1) with a delegation as `assertion` (`typ` `keyward-delegation+jwt`): the app
/// that holds the session key gets access tokens for the person, bound to that key by the DPoP proof it must send.
/// The host tokens' jwt-bearer grant answers every other assertion (`TokenGrant.assertionType`).
struct DelegationGrant: TokenGrant {
    var grantType: String { "urn:ietf:params:oauth:grant-type:jwt-bearer" }
    var assertionType: String? { Delegations.type }

    let delegations: Delegations
    let users: UserService
    /// The app session each delegation is kept as: ended, the delegation buys nothing.
    let appSessions: RefreshTokens

    func authorize(_ request: TokenGrantRequest) async throws(OAuthFailure) -> TokenGrantDecision {
        guard let assertion = request.form["assertion"], !assertion.isEmpty else {
            throw OAuthFailure.invalidRequest("missing parameter: assertion (the delegation)")
        }
        let claims: JSONObject
        let sessionKey: JWK
        do {
            (claims, sessionKey) = try await delegations.verify(assertion, realm: request.realm.name, clientId: request.client.clientId, now: request.now)
        } catch let error as JOSEError {
            throw OAuthFailure.invalidGrant("the delegation is not valid: \(error.message)", reason: "delegation_invalid")
        } catch {
            throw Self.unavailable
        }
        let userId = claims["sub"]?.stringValue ?? ""
        let sessionId = claims["sid"]?.stringValue ?? ""
        guard let session = try await appSessions.family(realm: request.realm.name, id: sessionId), session.isLive(now: request.now),
            session.userId == userId, session.clientId == request.client.clientId,
            // A session moved to a device's new key (the device rotated it) no longer answers the old key's delegation.
            session.jkt == nil || session.jkt == sessionKey.thumbprint()
        else {
            throw OAuthFailure.invalidGrant(
                "the delegation was ended (signed out, the app removed, or the password changed)", reason: "delegation_revoked"
            )
        }
        let user: User?
        do {
            user = try await users.user(realm: request.realm.name, id: userId)
        } catch {
            throw Self.unavailable
        }
        guard let user, user.enabled else {
            throw OAuthFailure.invalidGrant("the user is disabled or no longer exists", reason: "user_disabled")
        }
        var decision = TokenGrantDecision(subject: user.id, requiresDPoP: true)
        // The person consented to the app acting for them, not to any scope: the tokens carry none.
        decision.scope = ""
        decision.boundThumbprint = (
            sessionKey.thumbprint(),
            OAuthFailure(status: 400, code: .invalidDPoPProof, description: "the delegation is for another key than the DPoP proof's", reason: "delegation_key_mismatch")
        )
        var extra: JSONObject = [:]
        for name in ["auth_time", "acr", "sid"] { extra[name] = claims[name] }
        decision.accessTokenClaims = extra
        return decision
    }

    static let unavailable = OAuthFailure(status: 503, code: .unavailable, description: "the token service is temporarily unavailable")
}
