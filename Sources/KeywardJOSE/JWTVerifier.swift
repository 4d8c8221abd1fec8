// Verifying JWTs against an explicit policy: algorithms, keys, type, issuer, audience and time claims.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a JWT must satisfy. Everything is explicit: the algorithms, the keys, the type and the claims.
public struct JWTVerificationPolicy: Sendable {
    /// `.set`: the header kid is required and looked up exactly, never a fallback to another key.
    /// `.single`: if both the header and the key carry a kid, they must match.
    /// `.kidOptional`: a header kid selects exactly as `.set` does; without one, the keys fit for the header's
    /// `alg` are tried in order, at most `maxKeysTried` of them (a host token's `kid` is optional).
    public enum Keys: Sendable {
        case single(JWK)
        case set(JWKSet)
        case kidOptional(JWKSet)
    }

    /// Keys tried for one token without a kid: enough for a rotation overlap, too few to make junk costly.
    public static let maxKeysTried = 4

    public var allowedAlgorithms: Set<JWSAlgorithm>
    public var keys: Keys
    /// Compared case-insensitively, with the "application/" prefix optional (RFC 7515 §4.1.9). nil = not checked.
    public var expectedType: String?
    public var requiredClaims: Set<String>
    public var issuer: String?
    /// `aud` in the token may be a string or an array of strings.
    public var audience: String?
    public var leeway: TimeInterval
    /// The leeway `exp` gets when it must differ from `leeway` (a protocol whose peers check `exp` exactly);
    /// nil: `leeway`.
    public var expiryLeeway: TimeInterval?
    /// Upper bound for exp - (nbf ?? iat).
    public var maxLifetime: TimeInterval?
    public var maxSize: Int

    public init(
        allowedAlgorithms: Set<JWSAlgorithm>,
        keys: Keys,
        expectedType: String? = nil,
        requiredClaims: Set<String> = ["exp"],
        issuer: String? = nil,
        audience: String? = nil,
        leeway: TimeInterval = 30,
        expiryLeeway: TimeInterval? = nil,
        maxLifetime: TimeInterval? = nil,
        maxSize: Int = JWS.defaultMaxSize
    ) {
        self.allowedAlgorithms = allowedAlgorithms
        self.keys = keys
        self.expectedType = expectedType
        self.requiredClaims = requiredClaims
        self.issuer = issuer
        self.audience = audience
        self.leeway = leeway
        self.expiryLeeway = expiryLeeway
        self.maxLifetime = maxLifetime
        self.maxSize = maxSize
    }
}

public struct VerifiedJWT: Sendable {
    public let header: JSONObject
    public let claims: JSONObject
    public let key: JWK
    public let algorithm: JWSAlgorithm
}

/// A JWT split and its claims read, nothing verified: a caller reads the claims that choose the policy (the
/// issuer), and `JWTVerifier` checks those same claims, parsed once from the same payload.
public struct UnverifiedJWT: Sendable {
    public let jws: JWS
    public let claims: JSONObject
    /// The compact form's length in bytes, held against the policy's `maxSize`.
    let size: Int

    public init(_ compact: some StringProtocol, maxSize: Int = JWS.defaultMaxSize) throws(JOSEError) {
        jws = try JWS.parse(compact, maxSize: maxSize)
        claims = try jws.claims()
        size = compact.utf8.count
    }
}

public enum JWTVerifier {
    /// Checks run cheapest first; the signature is checked after the structural, header and claim checks,
    /// so junk costs no public-key operation. Claim values that fail are not trusted for anything else.
    public static func verify(_ compact: some StringProtocol, policy: JWTVerificationPolicy, now: Date) throws(JOSEError) -> VerifiedJWT {
        let jws = try JWS.parse(compact, maxSize: policy.maxSize)
        return try verify(jws, claims: nil, policy: policy, now: now)
    }

    /// The same checks for a token the caller has parsed already, to read what selects the policy (its issuer)
    /// without parsing it twice.
    public static func verify(parsed token: UnverifiedJWT, policy: JWTVerificationPolicy, now: Date) throws(JOSEError) -> VerifiedJWT {
        try JWS.checkSize(token.size, maxSize: policy.maxSize)
        return try verify(token.jws, claims: token.claims, policy: policy, now: now)
    }

    /// `claims`: already parsed from `jws`'s payload, or nil to parse them after the header checks.
    private static func verify(_ jws: JWS, claims parsedClaims: JSONObject?, policy: JWTVerificationPolicy, now: Date) throws(JOSEError) -> VerifiedJWT {
        let header = jws.header

        if let expected = policy.expectedType {
            guard let typ = header["typ"] else { throw JOSEError(.typeMismatch, "JWT header has no \"typ\"; expected \"\(expected)\"") }
            guard let actual = typ.stringValue, normalizeMediaType(actual) == normalizeMediaType(expected) else {
                throw JOSEError(.typeMismatch, "JWT header \"typ\" is not \"\(expected)\"")
            }
        }

        let algorithm = try allowedAlgorithm(jws.algorithmName, policy.allowedAlgorithms)
        let keys = try selectKeys(header: header, keys: policy.keys, algorithm: algorithm)
        let claims: JSONObject
        if let parsedClaims { claims = parsedClaims } else { claims = try jws.claims() }
        try checkClaims(claims, policy: policy, now: now.timeIntervalSince1970)

        guard let key = keys.first(where: { $0.verify(signature: jws.signature, over: jws.signingInput, algorithm: algorithm) }) else {
            if keys.count == 1 {
                throw JOSEError(.badSignature, "JWT signature does not verify with key \(keys[0].kid.map { "\"\(displayable($0))\"" } ?? "(no kid)")")
            }
            throw JOSEError(.badSignature, "JWT signature does not verify with any of the \(keys.count) \(algorithm.rawValue) keys tried")
        }
        return VerifiedJWT(header: header, claims: claims, key: key, algorithm: algorithm)
    }

    static func allowedAlgorithm(_ name: String, _ allowed: Set<JWSAlgorithm>) throws(JOSEError) -> JWSAlgorithm {
        guard let algorithm = JWSAlgorithm(rawValue: name) else {
            throw JOSEError(.algorithmNotAllowed, "alg \"\(displayable(name))\" is not an accepted signature algorithm")
        }
        guard allowed.contains(algorithm) else {
            throw JOSEError(.algorithmNotAllowed, "alg \(name) is not allowed here")
        }
        return algorithm
    }

    /// RFC 7515 §4.1.9: "application/" may be omitted when no other '/' appears; media types are case-insensitive.
    static func normalizeMediaType(_ value: String) -> String {
        let lower = value.lowercased()
        let prefix = "application/"
        if lower.hasPrefix(prefix) {
            let rest = lower.dropFirst(prefix.count)
            if !rest.contains("/") { return String(rest) }
        }
        return lower
    }

    /// The keys to check the signature with: one, except for `.kidOptional` without a header kid.
    private static func selectKeys(header: JSONObject, keys: JWTVerificationPolicy.Keys, algorithm: JWSAlgorithm) throws(JOSEError) -> [JWK] {
        if case .kidOptional(let set) = keys, header["kid"] == nil {
            let fit = set.keys.lazy.filter { $0.fits(algorithm) }
                .prefix(JWTVerificationPolicy.maxKeysTried)
            guard !fit.isEmpty else {
                throw JOSEError(.unknownKeyID, "JWT header has no \"kid\" and the issuer has no \(algorithm.rawValue) key")
            }
            return Array(fit)
        }
        return [try selectKey(header: header, keys: keys, algorithm: algorithm)]
    }

    private static func selectKey(header: JSONObject, keys: JWTVerificationPolicy.Keys, algorithm: JWSAlgorithm) throws(JOSEError) -> JWK {
        var kid: String?
        if let value = header["kid"] {
            guard let string = value.stringValue else { throw JOSEError(.malformed, "JWT header \"kid\" is not a string") }
            kid = string
        }
        let key: JWK
        switch keys {
        case .single(let single):
            if let kid, let own = single.kid, own != kid {
                throw JOSEError(.unknownKeyID, "JWT kid \"\(displayable(kid))\" does not match the configured key")
            }
            key = single
        case .set(let set), .kidOptional(let set):
            guard let kid else { throw JOSEError(.missingKeyID, "JWT header has no \"kid\" but the issuer has a key set") }
            let candidates = set.keys(withID: kid)
            guard !candidates.isEmpty else { throw JOSEError(.unknownKeyID, "JWT kid \"\(displayable(kid))\" is not in the key set") }
            // Several keys may share a kid across key types; pick the one made for this algorithm.
            key = candidates.first { $0.fits(algorithm) } ?? candidates[0]
        }
        guard key.isCompatible(with: algorithm) else {
            throw JOSEError(.algorithmKeyMismatch, "alg \(algorithm.rawValue) cannot be used with a \(key.material.keyTypeDescription) key")
        }
        if let pinned = key.alg, pinned != algorithm {
            throw JOSEError(.algorithmKeyMismatch, "key is pinned to \(pinned.rawValue) but the JWT says \(algorithm.rawValue)")
        }
        return key
    }

    /// A numeric date claim, or nil when absent. Strings, non-finite, negative and absurd values are errors,
    /// not "no limit".
    static func timestamp(_ claims: JSONObject, _ name: String) throws(JOSEError) -> Double? {
        guard let value = claims[name] else { return nil }
        guard let number = value.numberValue else { throw JOSEError(.invalidClaim, "claim \"\(name)\" is not a number") }
        guard isReasonableTimestamp(number) else {
            throw JOSEError(.invalidClaim, "claim \"\(name)\" is not a plausible time")
        }
        return number
    }

    private static func checkClaims(_ claims: JSONObject, policy: JWTVerificationPolicy, now: Double) throws(JOSEError) {
        for name in policy.requiredClaims.sorted() where claims[name] == nil || claims[name] == .null {
            throw JOSEError(.missingClaim, "claim \"\(name)\" is required")
        }
        let exp = try timestamp(claims, "exp")
        let nbf = try timestamp(claims, "nbf")
        let iat = try timestamp(claims, "iat")
        if let exp, now >= exp + (policy.expiryLeeway ?? policy.leeway) {
            throw JOSEError(.expired, "JWT expired at \(Int64(exp))")
        }
        if let nbf, nbf > now + policy.leeway {
            throw JOSEError(.notYetValid, "JWT is not valid before \(Int64(nbf))")
        }
        if let iat, iat > now + policy.leeway {
            throw JOSEError(.issuedInFuture, "JWT iat \(Int64(iat)) is in the future")
        }
        if let maxLifetime = policy.maxLifetime {
            guard let exp else { throw JOSEError(.missingClaim, "claim \"exp\" is required to bound the lifetime") }
            guard let start = nbf ?? iat else {
                throw JOSEError(.missingClaim, "claim \"iat\" or \"nbf\" is required to bound the lifetime")
            }
            if exp - start > maxLifetime {
                throw JOSEError(.lifetimeTooLong, "JWT lifetime \(Int64(exp - start)) s exceeds \(Int64(maxLifetime)) s")
            }
        }
        if let issuer = policy.issuer {
            guard let value = claims["iss"] else { throw JOSEError(.missingClaim, "claim \"iss\" is required") }
            guard let iss = value.stringValue else { throw JOSEError(.invalidClaim, "claim \"iss\" is not a string") }
            guard iss == issuer else {
                throw JOSEError(.issuerMismatch, "issuer \"\(displayable(iss, limit: 200))\" is not \"\(issuer)\"")
            }
        }
        if let audience = policy.audience {
            guard let value = claims["aud"] else { throw JOSEError(.missingClaim, "claim \"aud\" is required") }
            let audiences: [String]
            switch value {
            case .string(let single):
                audiences = [single]
            case .array(let many):
                var strings: [String] = []
                for element in many {
                    guard let string = element.stringValue else { throw JOSEError(.invalidClaim, "claim \"aud\" has a non-string entry") }
                    strings.append(string)
                }
                audiences = strings
            default:
                throw JOSEError(.invalidClaim, "claim \"aud\" is neither a string nor an array")
            }
            guard audiences.contains(audience) else {
                throw JOSEError(.audienceMismatch, "audience \"\(audience)\" is not among the token's \"aud\"")
            }
        }
    }
}
