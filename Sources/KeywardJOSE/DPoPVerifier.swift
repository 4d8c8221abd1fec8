// Verifying DPoP proofs, cheapest checks first, with a replay cache and a closed set of refusal reasons.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Remembers DPoP `jti`s. Implementations must be atomic: of two concurrent calls with the same key,
/// exactly one returns true.
public protocol DPoPReplayCache: Sendable {
    /// false when (jti, keyThumbprint) was already seen and has not expired.
    func recordOnce(jti: String, keyThumbprint: String, expiresAt: Date, now: Date) async throws -> Bool
}

public struct DPoPError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case invalidProof = "invalid_dpop_proof"
        case useNonce = "use_dpop_nonce"
    }

    public let code: Code
    /// Why a proof was refused: a closed set, so it can label metrics and be matched on without parsing
    /// messages. The raw value is the stable label.
    public enum Reason: String, Sendable, CaseIterable {
        case malformed
        case tooLarge = "too_large"
        case duplicateMember = "duplicate_member"
        case crit
        case b64
        case typ
        case alg
        case jwk
        case missingClaim = "missing_claim"
        case invalidClaim = "invalid_claim"
        case jti
        case htmMismatch = "htm_mismatch"
        case htuMismatch = "htu_mismatch"
        case iatWindow = "iat_window"
        case athMissing = "ath_missing"
        case athMismatch = "ath_mismatch"
        case jktMismatch = "jkt_mismatch"
        case nonce
        case badSignature = "bad_signature"
        case replayed
        case replayCheckFailed = "replay_check_failed"
    }

    public let reason: Reason
    public let message: String

    public init(code: Code, reason: Reason, message: String) {
        self.code = code
        self.reason = reason
        self.message = message
    }

    static func invalid(_ reason: Reason, _ message: String) -> DPoPError {
        DPoPError(code: .invalidProof, reason: reason, message: message)
    }

    public var description: String { "\(code.rawValue) (\(reason.rawValue)): \(message)" }
}

public struct DPoPVerifier: Sendable {
    public struct Options: Sendable {
        public var allowedAlgorithms: Set<JWSAlgorithm>
        /// How far in the past iat may be.
        public var maxAge: TimeInterval
        /// How far in the future iat may be (client clock ahead of ours).
        public var maxFutureSkew: TimeInterval
        public var maxProofSize: Int
        public var maxJTILength: Int
        /// How long a jti is remembered; must cover the whole acceptance window of one proof.
        public var replayLifetime: TimeInterval

        public init(
            allowedAlgorithms: Set<JWSAlgorithm> = Set(JWSAlgorithm.allCases),
            maxAge: TimeInterval = 120,
            maxFutureSkew: TimeInterval = 120,
            maxProofSize: Int = 8192,
            maxJTILength: Int = 256,
            replayLifetime: TimeInterval? = nil
        ) {
            self.allowedAlgorithms = allowedAlgorithms
            self.maxAge = maxAge
            self.maxFutureSkew = maxFutureSkew
            self.maxProofSize = maxProofSize
            self.maxJTILength = maxJTILength
            self.replayLifetime = replayLifetime ?? (maxAge + maxFutureSkew)
        }
    }

    public struct Verified: Sendable {
        public let jwk: JWK
        public let thumbprint: String
        public let claims: JSONObject
        public let header: JSONObject
        public let jti: String
        public let issuedAt: Date
    }

    public let options: Options
    let replayCache: any DPoPReplayCache

    public init(options: Options = .init(), replayCache: any DPoPReplayCache) {
        self.options = options
        self.replayCache = replayCache
    }

    /// RFC 9449 §4.3 steps 2–12, cheapest checks first. The replay cache is written last, after the signature
    /// and every claim check, so that unauthenticated garbage cannot fill it. Nothing referenced by `kid`, `jku`,
    /// `x5u` or `x5c` is ever fetched.
    ///
    /// - Parameters:
    ///   - accessToken: when non-nil, `ath` is required and must match.
    ///   - expectedThumbprint: when non-nil (`cnf.jkt`), the proof key must have this RFC 7638 thumbprint.
    ///   - expectedNonce: when non-nil, the `nonce` claim must equal it, else `.useNonce`.
    ///   - verificationKey: when non-nil (e.g. a push-MFA device's stored key), verify with it instead of the
    ///     header `jwk`, which then becomes optional but must still be a valid public key if present.
    public func verify(
        proof: String,
        method: String,
        url: String,
        accessToken: String? = nil,
        expectedThumbprint: String? = nil,
        expectedNonce: String? = nil,
        verificationKey: JWK? = nil,
        now: Date
    ) async throws(DPoPError) -> Verified {
        let (jws, claims) = try parse(proof)
        return try await verify(parsed: jws, claims: claims, method: method, url: url, accessToken: accessToken,
                                expectedThumbprint: expectedThumbprint, expectedNonce: expectedNonce,
                                verificationKey: verificationKey, now: now)
    }

    /// The same checks for a proof the caller has parsed already, header and claims (the resource gate reads the
    /// claims to find a stored key first), so it is parsed once. The caller has checked its size against
    /// `maxProofSize`, and `claims` must be `jws.claims()`.
    public func verify(
        parsed jws: JWS,
        claims: JSONObject,
        method: String,
        url: String,
        accessToken: String? = nil,
        expectedThumbprint: String? = nil,
        expectedNonce: String? = nil,
        verificationKey: JWK? = nil,
        now: Date
    ) async throws(DPoPError) -> Verified {
        let checked = try check(jws: jws, claims: claims, method: method, url: url, accessToken: accessToken,
                                expectedThumbprint: expectedThumbprint, expectedNonce: expectedNonce,
                                verificationKey: verificationKey, now: now)
        let fresh: Bool
        do {
            fresh = try await replayCache.recordOnce(
                jti: checked.jti, keyThumbprint: checked.thumbprint,
                expiresAt: now.addingTimeInterval(options.replayLifetime), now: now)
        } catch {
            // Fail closed: without the replay check we cannot say the proof is fresh.
            throw .invalid(.replayCheckFailed, "DPoP replay check failed")
        }
        guard fresh else { throw .invalid(.replayed, "DPoP proof jti has already been used") }
        return checked
    }

    /// The proof's JWS and claims, within `maxProofSize`.
    private func parse(_ proof: String) throws(DPoPError) -> (JWS, JSONObject) {
        guard proof.utf8.count <= options.maxProofSize else {
            throw .invalid(.tooLarge, "DPoP proof is larger than \(options.maxProofSize) bytes")
        }
        do throws(JOSEError) {
            let jws = try JWS.parse(proof, maxSize: options.maxProofSize)
            return (jws, try jws.claims())
        } catch {
            throw Self.map(error)
        }
    }

    /// Everything except the replay check. Internal on purpose: a caller that skipped the replay cache would
    /// accept replays.
    func check(
        proof: String,
        method: String,
        url: String,
        accessToken: String? = nil,
        expectedThumbprint: String? = nil,
        expectedNonce: String? = nil,
        verificationKey: JWK? = nil,
        now: Date
    ) throws(DPoPError) -> Verified {
        let (jws, claims) = try parse(proof)
        return try check(jws: jws, claims: claims, method: method, url: url, accessToken: accessToken, expectedThumbprint: expectedThumbprint,
                         expectedNonce: expectedNonce, verificationKey: verificationKey, now: now)
    }

    func check(
        jws: JWS,
        claims: JSONObject,
        method: String,
        url: String,
        accessToken: String?,
        expectedThumbprint: String?,
        expectedNonce: String?,
        verificationKey: JWK?,
        now: Date
    ) throws(DPoPError) -> Verified {
        let header = jws.header

        guard header["typ"]?.stringValue == "dpop+jwt" else {
            throw .invalid(.typ, header["typ"] == nil ? "DPoP proof header has no \"typ\"" : "DPoP proof \"typ\" is not \"dpop+jwt\"")
        }
        guard let algorithm = JWSAlgorithm(rawValue: jws.algorithmName), options.allowedAlgorithms.contains(algorithm) else {
            throw .invalid(.alg, "DPoP proof alg \"\(displayable(jws.algorithmName))\" is not allowed")
        }

        var headerKey: JWK?
        if let value = header["jwk"] {
            guard let object = value.objectValue else { throw .invalid(.jwk, "DPoP proof \"jwk\" is not an object") }
            do throws(JOSEError) {
                // The proof key is the client's own: short EC coordinates are read as the Keycloak extension's
                // clients write them, and the thumbprint (cnf.jkt) is that of the full-size form.
                headerKey = try JWK(json: object, coordinates: .padShort)
            } catch {
                throw .invalid(.jwk, "DPoP proof jwk: \(error.message)")
            }
        }
        guard let key = verificationKey ?? headerKey else {
            throw .invalid(.jwk, "DPoP proof header has no \"jwk\"")
        }
        guard key.fits(algorithm) else {
            throw .invalid(.alg, "DPoP proof alg \(algorithm.rawValue) does not fit its \(key.material.keyTypeDescription) key")
        }


        guard let jtiValue = claims["jti"] else { throw .invalid(.missingClaim, "DPoP proof has no \"jti\"") }
        guard let htmValue = claims["htm"] else { throw .invalid(.missingClaim, "DPoP proof has no \"htm\"") }
        guard let htuValue = claims["htu"] else { throw .invalid(.missingClaim, "DPoP proof has no \"htu\"") }
        guard let iatValue = claims["iat"] else { throw .invalid(.missingClaim, "DPoP proof has no \"iat\"") }
        guard let jti = jtiValue.stringValue, !jti.isEmpty, jti.utf8.count <= options.maxJTILength else {
            throw .invalid(.jti, "DPoP proof \"jti\" must be a non-empty string of at most \(options.maxJTILength) bytes")
        }
        guard let htm = htmValue.stringValue else { throw .invalid(.invalidClaim, "DPoP proof \"htm\" is not a string") }
        guard let htu = htuValue.stringValue else { throw .invalid(.invalidClaim, "DPoP proof \"htu\" is not a string") }
        guard let iat = iatValue.numberValue else { throw .invalid(.invalidClaim, "DPoP proof \"iat\" is not a number") }

        // Methods are case-sensitive tokens (RFC 9110 §9.1).
        guard htm == method else { throw .invalid(.htmMismatch, "DPoP proof htm \"\(displayable(htm))\" is not \(method)") }
        guard let proofURL = HTU.normalize(htu), let requestURL = HTU.normalize(url), proofURL == requestURL else {
            throw .invalid(.htuMismatch, "DPoP proof htu does not match the request URL")
        }

        let nowSeconds = now.timeIntervalSince1970
        guard isReasonableTimestamp(iat), iat >= nowSeconds - options.maxAge, iat <= nowSeconds + options.maxFutureSkew else {
            throw .invalid(.iatWindow, "DPoP proof iat is outside the accepted window")
        }

        if let accessToken {
            guard let athValue = claims["ath"] else { throw .invalid(.athMissing, "DPoP proof has no \"ath\"") }
            guard let ath = athValue.stringValue, ConstantTime.equal(ath, DPoPProof.accessTokenHash(accessToken)) else {
                throw .invalid(.athMismatch, "DPoP proof ath does not match the access token")
            }
        }

        let thumbprint = key.thumbprint()
        if let expectedThumbprint, thumbprint != expectedThumbprint {
            throw .invalid(.jktMismatch, "DPoP proof key is not the key the token is bound to")
        }

        if let expectedNonce {
            guard let nonce = claims["nonce"]?.stringValue, ConstantTime.equal(nonce, expectedNonce) else {
                throw DPoPError(code: .useNonce, reason: .nonce,
                                message: claims["nonce"] == nil ? "DPoP proof has no \"nonce\"" : "DPoP proof nonce is not current")
            }
        }

        guard key.verify(signature: jws.signature, over: jws.signingInput, algorithm: algorithm) else {
            throw .invalid(.badSignature, "DPoP proof signature does not verify")
        }

        return Verified(jwk: key, thumbprint: thumbprint, claims: claims, header: header, jti: jti,
                        issuedAt: Date(timeIntervalSince1970: iat))
    }

    static func map(_ error: JOSEError) -> DPoPError {
        let reason: DPoPError.Reason
        switch error.code {
        case .tooLarge: reason = .tooLarge
        case .duplicateMember: reason = .duplicateMember
        case .unsupportedCritical: reason = .crit
        case .unsupportedB64: reason = .b64
        case .missingAlgorithm, .algorithmNotAllowed, .algorithmKeyMismatch: reason = .alg
        case .unsupportedKey, .weakKey, .privateKeyMaterial, .invalidKey: reason = .jwk
        default: reason = .malformed
        }
        return .invalid(reason, "DPoP proof: \(error.message)")
    }
}
