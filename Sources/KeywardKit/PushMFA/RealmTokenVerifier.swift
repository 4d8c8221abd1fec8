// Checking the realm-signed enrollment and confirm tokens a device receives against the realm's JWKS.
import Foundation
import KeywardJOSE
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Checks realm-signed tokens (enrollment, confirm) against the realm's JWKS — the step the original's demo
/// clients skip: signature, issuer, expiry, and for enrollment tokens `aud` = realm and `typ` = push-enroll-challenge.
public struct RealmTokenVerifier: Sendable {
    /// The realm's issuer URL: tokens must name it as `iss`, and the realm's JWKS is fetched from under it.
    public let issuer: String
    let fetchKeys: @Sendable () async throws -> JWKSet
    let clock: @Sendable () -> Date

    /// A verifier that fetches the realm's JWKS from `{issuer}/protocol/openid-connect/certs` for each check.
    public init(issuer: String, session: URLSession = .shared, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.init(issuer: issuer, clock: clock) {
            guard let url = URL(string: issuer + "/protocol/openid-connect/certs") else { throw KeywardKitError.invalidURL(issuer) }
            let (data, response) = try await session.keywardGet(url, accept: "application/json")
            guard response.statusCode == 200 else { throw KeywardKitError.unexpectedResponse("JWKS fetch from \(url) answered \(response.statusCode)") }
            return try JWKSet(json: Array(data))
        }
    }

    /// With an injected key source (tests).
    public init(issuer: String, clock: @escaping @Sendable () -> Date = { Date() }, fetchKeys: @escaping @Sendable () async throws -> JWKSet) {
        self.issuer = issuer
        self.clock = clock
        self.fetchKeys = fetchKeys
    }

    /// The realm name: the last path component of `…/realms/<name>`.
    public var realm: String { URL(string: issuer)?.lastPathComponent ?? "" }

    /// Verifies an enrollment token — signature by a key of the realm's JWKS, `iss`, `exp`, `aud` equal to the
    /// realm's name, `typ` equal to `push-enroll-challenge`, and `sub`, `enrollmentId` and `nonce` present — and
    /// returns its claims. Throws ``KeywardKitError/untrustedToken(_:)`` when any check fails.
    public func verifyEnrollmentToken(_ token: String) async throws -> JSONObject {
        let claims = try await verify(token, audience: realm, required: ["exp", "sub", "enrollmentId", "nonce"])
        guard claims["typ"]?.stringValue == "push-enroll-challenge" else { throw KeywardKitError.untrustedToken("not an enrollment token (typ)") }
        return claims
    }

    /// Verifies a pushed confirm token — signature, `iss`, `exp`, and `cid` and `credId` present; it has no
    /// audience — and returns its claims. Throws ``KeywardKitError/untrustedToken(_:)`` when any check fails.
    public func verifyConfirmToken(_ token: String) async throws -> JSONObject {
        try await verify(token, audience: nil, required: ["exp", "cid", "credId"])
    }

    /// Verifies an id_token (OpenID Connect Core §3.1.3.7): signature, `iss`, `aud` = `clientId`, `exp`, `iat`,
    /// `nonce` = the request's, and `at_hash` over the access token it came with; returns its claims.
    public func verifyIDToken(_ token: String, clientId: String, nonce: String, accessToken: String) async throws -> JSONObject {
        let verified = try await verified(token, audience: clientId, required: ["exp", "iat", "sub", "nonce", "at_hash"])
        let claims = verified.claims
        guard claims["nonce"]?.stringValue == nonce else { throw KeywardKitError.untrustedToken("the id_token's nonce is not this sign-in's") }
        guard claims["at_hash"]?.stringValue == TokenHash.leftHalf(of: accessToken, algorithm: verified.algorithm) else {
            throw KeywardKitError.untrustedToken("the id_token's at_hash does not match the access token")
        }
        return claims
    }

    /// A broker delegation (`typ` `keyward-delegation+jwt`) for this app, naming `sessionKey` in `cnf.jwk`.
    public func verifyDelegation(_ token: String, clientId: String, sessionKey: JWK) async throws -> JSONObject {
        let verified = try await verified(token, audience: clientId, required: ["exp", "iat", "sub", "cnf"])
        guard verified.header["typ"]?.stringValue == "keyward-delegation+jwt" else {
            throw KeywardKitError.untrustedToken("the hand-off is not a delegation (typ \(verified.header["typ"]?.stringValue ?? "none"))")
        }
        guard case .object(let confirmation)? = verified.claims["cnf"], case .object(let jwk)? = confirmation["jwk"],
            (try? JWK(json: jwk))?.thumbprint() == sessionKey.thumbprint()
        else { throw KeywardKitError.untrustedToken("the delegation is for another key than this app's session key") }
        return verified.claims
    }

    private func verify(_ token: String, audience: String?, required: Set<String>) async throws -> JSONObject {
        try await verified(token, audience: audience, required: required).claims
    }

    private func verified(_ token: String, audience: String?, required: Set<String>) async throws -> VerifiedJWT {
        let keys = try await fetchKeys()
        let policy = JWTVerificationPolicy(
            allowedAlgorithms: Set(JWSAlgorithm.allCases), keys: .set(keys), requiredClaims: required, issuer: issuer, audience: audience, leeway: 30
        )
        do {
            return try JWTVerifier.verify(token, policy: policy, now: clock())
        } catch {
            throw KeywardKitError.untrustedToken(error.message)
        }
    }
}
