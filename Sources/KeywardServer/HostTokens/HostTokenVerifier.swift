// Verifying a host-signed token under its registered issuer's rules, with issuers read through a short cache.
import Foundation
import KeywardJOSE

/// Verifies a host-signed token (a JWT from a customer's own auth provider) for one realm, under the rules of the
/// issuer it names: registered `iss`, the issuer's algorithms and keys, `typ` JWT, `aud`, `sub`, `exp`, `nbf`/`iat`,
/// the lifetime cap, `jti`. Everything JOSE goes through `JWTVerifier`; this type only chooses the policy.
struct HostTokenVerifier: Sendable {
    /// Host tokens carry a few claims; 8 KiB leaves room for a certificate-heavy header and refuses junk early.
    static let maxTokenSize = 8 * 1024
    static let maxJTILength = 256
    static let maxSubjectLength = 255

    struct Verified: Sendable {
        let issuer: HostIssuer
        let subject: String
        let jti: String?
        let expiresAt: Date
        /// `cnf.jkt` (RFC 7800 §3.1 with RFC 9449 §6.1's member): the host token is bound to one DPoP key.
        let boundThumbprint: String?
    }

    let issuers: HostIssuerDirectory
    let keys: HostIssuerKeys
    /// The realm's own issuer URL, the audience host tokens name unless their issuer says otherwise.
    let realmIssuerURL: @Sendable (String) -> String

    func verify(_ token: String, realm: String, now: Date) async throws(HostTokenRefusal) -> Verified {
        // The header and claims are read unverified only to find the issuer and the key; JWTVerifier checks all.
        let parsed: UnverifiedJWT
        do throws(JOSEError) {
            parsed = try UnverifiedJWT(token, maxSize: Self.maxTokenSize)
        } catch {
            throw HostTokenRefusal(error)
        }
        let jws = parsed.jws
        let unverifiedClaims = parsed.claims
        guard let issValue = unverifiedClaims["iss"] else { throw HostTokenRefusal(.missingClaim, "claim \"iss\" is required") }
        guard let iss = issValue.stringValue else { throw HostTokenRefusal(.invalidClaim, "claim \"iss\" is not a string") }
        guard let issuer = try await issuers.issuer(realm: realm, iss: iss) else {
            throw HostTokenRefusal(.unknownIssuer, "issuer \"\(displayable(iss, limit: 128))\" is not registered in realm '\(realm)'")
        }
        // Before the keys are looked up: a token whose algorithm the issuer refuses must not cost a key fetch.
        guard let algorithm = JWSAlgorithm(rawValue: jws.algorithmName), issuer.algorithms.contains(algorithm) else {
            throw HostTokenRefusal(.algorithmNotAllowed, "alg \"\(displayable(jws.algorithmName))\" is not allowed for issuer \(issuer.issuer)")
        }
        var kid: String?
        if let value = jws.header["kid"] {
            guard let string = value.stringValue else { throw HostTokenRefusal(.malformed, "header \"kid\" is not a string") }
            kid = string
        }
        let policy = JWTVerificationPolicy(
            allowedAlgorithms: Set(issuer.algorithms),
            keys: try await keys.keys(for: issuer, kid: kid),
            expectedType: "JWT",
            requiredClaims: issuer.requireJTI ? ["iss", "sub", "exp", "jti"] : ["iss", "sub", "exp"],
            issuer: issuer.issuer,
            audience: issuer.audience ?? realmIssuerURL(realm),
            leeway: TimeInterval(issuer.leeway),
            maxLifetime: TimeInterval(issuer.maxLifetime),
            maxSize: Self.maxTokenSize
        )
        let claims: JSONObject
        do throws(JOSEError) {
            claims = try JWTVerifier.verify(parsed: parsed, policy: policy, now: now).claims
        } catch {
            throw HostTokenRefusal(error)
        }
        guard let subject = claims["sub"]?.stringValue, (1...Self.maxSubjectLength).contains(subject.utf8.count) else {
            throw HostTokenRefusal(.invalidClaim, "claim \"sub\" must be a string of 1-\(Self.maxSubjectLength) bytes")
        }
        var jti: String?
        if let value = claims["jti"] {
            guard let string = value.stringValue, (1...Self.maxJTILength).contains(string.utf8.count) else {
                throw HostTokenRefusal(.invalidClaim, "claim \"jti\" must be a string of 1-\(Self.maxJTILength) bytes")
            }
            jti = string
        }
        var boundThumbprint: String?
        if let cnf = claims["cnf"] {
            guard let jkt = cnf.objectValue?["jkt"]?.stringValue, !jkt.isEmpty, jkt.utf8.count <= 128 else {
                throw HostTokenRefusal(.invalidClaim, "claim \"cnf\" must be an object with a \"jkt\" thumbprint")
            }
            boundThumbprint = jkt
        }
        // JWTVerifier required exp under the lifetime cap.
        let exp = claims["exp"]?.numberValue ?? now.timeIntervalSince1970
        return Verified(issuer: issuer, subject: subject, jti: jti, expiresAt: Date(timeIntervalSince1970: exp), boundThumbprint: boundThumbprint)
    }
}

/// Registered issuers by (realm, iss), read through a cache of a few seconds: a token exchange costs no query for
/// its issuer's settings, and a change made on any node applies within `cacheLifetime`.
final class HostIssuerDirectory: Sendable {
    static let cacheLifetime: TimeInterval = 5
    private let store: any HostIssuerStore
    private let clock: any KeywardClock
    private let cache = ShortLivedCache<String, HostIssuer>(lifetime: HostIssuerDirectory.cacheLifetime)

    init(store: any HostIssuerStore, clock: any KeywardClock) {
        self.store = store
        self.clock = clock
    }

    func issuer(realm: String, iss: String) async throws(HostTokenRefusal) -> HostIssuer? {
        let key = realm + "\u{0}" + iss
        let now = clock.now()
        if let cached = cache.value(for: key, now: now) { return cached }
        let issuer: HostIssuer?
        do {
            issuer = try await store.issuer(realm: realm, issuer: iss)
        } catch {
            throw HostTokenRefusal(.storeUnavailable, "the issuer registry cannot be read")
        }
        if let issuer { cache.store(issuer, for: key, now: now) }
        return issuer
    }

    /// Forgets cached settings, after `keyward issuers` changed them in this process.
    func forget() { cache.removeAll() }
}
