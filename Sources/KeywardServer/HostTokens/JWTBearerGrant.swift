// The JWT bearer grant: an enrolled user's host-signed token exchanged for a Keyward access token.
import Foundation
import KeywardJOSE

/// The JWT bearer grant (RFC 7523 §2.1) at a realm's token endpoint: a host-signed token (`assertion`) of an
/// enrolled user becomes a Keyward access token for that user, DPoP-bound unless the issuer allows bearer
/// exchanges. No refresh token: the app asks its token signer for a new host token instead.
struct JWTBearerGrant: TokenGrant {
    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    var grantType: String { Self.grantType }

    let verifier: HostTokenVerifier
    let users: UserService
    let metrics: KeywardMetrics

    func authorize(_ request: TokenGrantRequest) async throws(OAuthFailure) -> TokenGrantDecision {
        guard let assertion = request.form["assertion"], !assertion.isEmpty else {
            throw OAuthFailure.invalidRequest("missing parameter: assertion (the host token)")
        }
        do throws(HostTokenRefusal) {
            let decision = try await decide(assertion, realm: request.realm.name, client: request.client.clientId, now: request.now)
            metrics.hostTokenChecked(outcome: "verified")
            return decision
        } catch {
            metrics.hostTokenChecked(outcome: error.reason.rawValue)
            throw error.oauthFailure
        }
    }

    /// A replay record outlives the token's acceptance window by this much, so a node whose clock runs ahead does
    /// not sweep it while another node would still accept the token.
    static let replayMargin: TimeInterval = 60

    private func decide(_ assertion: String, realm: String, client: String, now: Date) async throws(HostTokenRefusal) -> TokenGrantDecision {
        let token = try await verifier.verify(assertion, realm: realm, now: now)
        if let clients = token.issuer.clients, !clients.contains(client) {
            throw HostTokenRefusal(.clientNotAllowed, "issuer \(token.issuer.issuer) does not serve client '\(client)'")
        }
        let enrolled: UserService.IdentifiedUser?
        do {
            enrolled = try await users.cachedUser(realm: realm, issuer: token.issuer.issuer, subject: token.subject)
        } catch {
            throw HostTokenRefusal(.storeUnavailable, "enrolled users cannot be read")
        }
        guard let enrolled, enrolled.identity.kind == .hostIssuer else {
            throw HostTokenRefusal(.subjectNotEnrolled, "subject \"\(displayable(token.subject))\" is not enrolled for issuer \(token.issuer.issuer)")
        }
        guard enrolled.user.enabled else {
            throw HostTokenRefusal(.userDisabled, "the user enrolled as \"\(displayable(token.subject))\" is disabled")
        }
        let singleUse = token.jti.map { jti in
            TokenGrantDecision.SingleUse(
                scope: "host-jti:\(realm):\(token.issuer.issuer)", key: jti,
                // Kept until the token could no longer be accepted anyway.
                expiresAt: token.expiresAt.addingTimeInterval(TimeInterval(token.issuer.leeway) + Self.replayMargin),
                replayed: { [metrics] in
                    metrics.hostTokenChecked(outcome: HostTokenRefusal.Reason.jtiReplayed.rawValue)
                    return HostTokenRefusal(.jtiReplayed, "jti \"\(displayable(jti))\" was used before").oauthFailure
                }
            )
        }
        let bound = token.boundThumbprint.map { jkt in
            (thumbprint: jkt, refusal: HostTokenRefusal(.keyBindingMismatch, "the host token is bound (cnf.jkt) to another key than the DPoP proof's").oauthFailure)
        }
        // A bound host token needs that key's proof even where the issuer allows bearer exchanges (TokenService).
        return TokenGrantDecision(subject: enrolled.user.id, requiresDPoP: !token.issuer.allowBearer, singleUse: singleUse, boundThumbprint: bound)
    }
}
