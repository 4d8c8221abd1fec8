// The authorization_code grant: a code from the authorization endpoint, its PKCE verifier, and the tokens it starts.
import Crypto
import Foundation
import KeywardJOSE

/// `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.5, RFC 9449 §10): the code opens, is unexpired,
/// was issued to this client for this redirect URI, the verifier matches its S256 challenge, and a code bound with
/// `dpop_jkt` comes with a proof by that key. The token endpoint then spends the code once; what it answers
/// starts a refresh-token family and, for `openid`, carries an id_token.
struct AuthorizationCodeGrant: TokenGrant {
    var grantType: String { "authorization_code" }

    let codes: SealedJSON
    let users: UserService
    let refresh: RefreshTokens
    let idTokens: IDTokenIssuer

    /// A spent code is remembered this long past its expiry, so a late second use is still seen as one.
    static let replayMargin: TimeInterval = 300

    func authorize(_ request: TokenGrantRequest) async throws(OAuthFailure) -> TokenGrantDecision {
        let realm = request.realm
        guard let text = request.form["code"], !text.isEmpty else { throw OAuthFailure.invalidRequest("missing parameter: code") }
        guard let verifier = request.form["code_verifier"] else {
            throw OAuthFailure.invalidRequest("missing parameter: code_verifier (PKCE is required for every client)")
        }
        guard let redirectURI = request.form["redirect_uri"] else { throw OAuthFailure.invalidRequest("missing parameter: redirect_uri") }
        guard let code = codes.open(text, realm: realm.name).flatMap(AuthorizationCode.init(json:)) else {
            throw OAuthFailure.invalidGrant("the authorization code is not valid", reason: "code_invalid")
        }
        guard code.clientId == request.client.clientId else {
            throw OAuthFailure.invalidGrant("the authorization code was issued to another client", reason: "code_client_mismatch")
        }
        guard code.redirectURI == redirectURI else {
            throw OAuthFailure.invalidGrant("redirect_uri is not the one the authorization request named", reason: "redirect_uri_mismatch")
        }
        guard PKCE.verifies(verifier, challenge: code.codeChallenge) else {
            throw OAuthFailure.invalidGrant("code_verifier does not match the authorization request's code_challenge", reason: "pkce_mismatch")
        }
        guard code.expiresAt > request.now else {
            // Its own client presenting it again after its minute is a reuse all the same; checked after the client
            // and the verifier, so that someone who only saw the code cannot end the sign-in it started.
            await refresh.revokeStartedBy(code, realm: realm.name, now: request.now)
            throw OAuthFailure.invalidGrant("the authorization code has expired", reason: "code_expired")
        }
        try await refresh.requireEnabled(realm: realm.name, userId: code.userId)

        var decision = TokenGrantDecision(subject: code.userId, requiresDPoP: false)
        decision.scope = code.scope
        // `sid`: the app's session, the refresh-token family this code starts (the userinfo endpoint and
        // revocation read it).
        decision.accessTokenClaims = [
            "auth_time": .number(code.authTime.timeIntervalSince1970), "acr": .string(code.acr), "sid": .string(code.id),
        ]
        decision.singleUse = TokenGrantDecision.SingleUse(
            scope: "authorization-code:" + realm.name, key: code.id, expiresAt: code.expiresAt.addingTimeInterval(Self.replayMargin),
            replayed: { [refresh, now = request.now] in
                await refresh.revokeStartedBy(code, realm: realm.name, now: now)
                return OAuthFailure.invalidGrant("the authorization code was used already; the tokens issued for it are revoked", reason: "code_reused")
            }
        )
        if let jkt = code.dpopJKT {
            decision.boundThumbprint = (
                jkt, OAuthFailure(status: 400, code: .invalidDPoPProof, description: "the DPoP proof's key is not the one dpop_jkt named", reason: "dpop_jkt_mismatch")
            )
        }
        decision.finish = { [refresh, idTokens] issued throws(OAuthFailure) in
            let token = try await refresh.start(code, realm: realm.name, jkt: issued.jkt, now: issued.now)
            guard code.scope.split(separator: " ").contains("openid") else { return TokenGrantExtras(refreshToken: token) }
            let subject = IDTokenIssuer.Subject(
                userId: code.userId, clientId: code.clientId, nonce: code.nonce, authTime: code.authTime, amr: code.amr, acr: code.acr,
                sessionId: code.id
            )
            do {
                return TokenGrantExtras(refreshToken: token, idToken: try await idTokens.issue(realm: realm, for: subject, accessToken: issued.accessToken, now: issued.now))
            } catch {
                throw OAuthFailure(status: 503, code: .unavailable, description: "the token service is temporarily unavailable")
            }
        }
        return decision
    }
}
