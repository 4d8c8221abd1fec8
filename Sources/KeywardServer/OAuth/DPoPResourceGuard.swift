// The one DPoP gate every protected resource goes through: access token, proof, key binding, replay.
import Foundation
import KeywardJOSE
import KeywardWire

/// The one DPoP gate every protected resource goes through (RFC 9449 §7): the realm-signed access token, one
/// proof, its key — the proof's own `jwk`, or a key stored for the caller — bound to the token's `cnf.jkt`,
/// `ath`, and the replay cache. The `Authorization` header and the proof are each parsed once. Every refusal is
/// a `Refusal` with a reason from a closed set, counted in metrics here; each part maps it to its own wire
/// form (an OAuth challenge for resources, the original's messages for the push-MFA device API).
public final class DPoPResourceGuard: Sendable {
    public struct Caller: Sendable {
        public let claims: JSONObject
        public let proof: DPoPVerifier.Verified
        /// What a `.stored` key source found besides the key (a push-MFA device and its user).
        public let owner: (any Sendable)?
        public var subject: String { claims["sub"]?.stringValue ?? "" }
    }

    public struct Request: Sendable {
        public var realm: Realm
        public var method: String
        /// The request's public URL (query and fragment are ignored by the `htu` check).
        public var url: String
        public var authorization: [String]
        public var dpopProofs: [String]

        public init(realm: Realm, method: String, url: String, authorization: [String], dpopProofs: [String]) {
            self.realm = realm
            self.method = method
            self.url = url
            self.authorization = authorization
            self.dpopProofs = dpopProofs
        }
    }

    public struct Options: Sendable {
        public var proof: DPoPVerifier.Options
        /// `Authorization: Bearer` tolerated where older clients need it (the push-MFA device API); the proof is
        /// required either way.
        public var acceptsBearerScheme = false
        /// `ath` required (RFC 9449), or checked only when the proof carries one (push MFA's `requireAth=false`).
        public var requiresAth = true
        /// Prefix of the replay cache's scope; the realm is appended.
        public var replayScope = "dpop"
        /// The metric label of refusals.
        public var endpoint = DPoPRejection.Endpoint.resource
        public var maxTokenSize = 16384

        public init(proof: DPoPVerifier.Options) {
            self.proof = proof
        }
    }

    /// A key stored for the caller, and whatever else its lookup found.
    public struct StoredKey: Sendable {
        public let key: JWK
        public let owner: any Sendable

        public init(key: JWK, owner: any Sendable) {
            self.key = key
            self.owner = owner
        }
    }

    /// Where the proof's key comes from.
    public enum KeySource: Sendable {
        /// The proof's `jwk` header, whose thumbprint must be the token's `cnf.jkt`.
        case proofHeader
        /// A key found from the proof's header and claims (not yet verified), whose thumbprint must be the token's
        /// `cnf.jkt`. The lookup may refuse; it runs before any signature is checked.
        case stored(@Sendable (_ proof: JWS, _ claims: JSONObject) async throws(Refusal) -> StoredKey)
    }

    public struct Refusal: Error, Sendable {
        public let reason: DPoPRejection
        /// A description naming the input at fault, for an OAuth challenge.
        public let message: String
        /// The part's own error when its stored-key lookup refused (push MFA keeps the original's messages).
        public let partError: (any Error & Sendable)?

        public init(_ reason: DPoPRejection, _ message: String, partError: (any Error & Sendable)? = nil) {
            self.reason = reason
            self.message = message
            self.partError = partError
        }
    }

    private let issuer: AccessTokenIssuer
    private let singleUse: any SingleUseStore
    public let options: Options
    private let clock: any KeywardClock
    private let metrics: KeywardMetrics

    public init(issuer: AccessTokenIssuer, singleUse: any SingleUseStore, options: Options, clock: any KeywardClock, metrics: KeywardMetrics) {
        self.issuer = issuer
        self.singleUse = singleUse
        self.options = options
        self.clock = clock
        self.metrics = metrics
    }

    public func authenticate(_ request: Request, keys: KeySource = .proofHeader) async throws(Refusal) -> Caller {
        do throws(Refusal) {
            return try await check(request, keys: keys)
        } catch {
            metrics.dpopRejected(endpoint: options.endpoint, reason: error.reason)
            throw error
        }
    }

    /// Only the access token, for the push-MFA enrollment path that sends no proof (the original's legacy clients).
    public func verifiedToken(_ request: Request) async throws(Refusal) -> VerifiedJWT {
        do throws(Refusal) {
            return try await token(request).verified
        } catch {
            metrics.dpopRejected(endpoint: options.endpoint, reason: error.reason)
            throw error
        }
    }

    private func check(_ request: Request, keys: KeySource) async throws(Refusal) -> Caller {
        let (compactToken, token) = try await token(request)
        guard request.dpopProofs.count == 1 else {
            throw request.dpopProofs.isEmpty
                ? Refusal(.proofMissing, "DPoP proof required (DPoP header)") : Refusal(.multipleProofs, "more than one DPoP header")
        }
        let compactProof = request.dpopProofs[0]
        guard compactProof.utf8.count <= options.proof.maxProofSize else {
            throw Refusal(.proof(.tooLarge), "DPoP proof is larger than \(options.proof.maxProofSize) bytes")
        }
        let jws: JWS
        let proofClaims: JSONObject
        do throws(JOSEError) {
            jws = try JWS.parse(compactProof, maxSize: options.proof.maxProofSize)
            proofClaims = try jws.claims()
        } catch {
            throw Refusal(.proof(.malformed), "DPoP proof: \(error.message)")
        }

        var storedKey: StoredKey?
        if case .stored(let lookup) = keys { storedKey = try await lookup(jws, proofClaims) }
        guard case .object(let confirmation)? = token.claims["cnf"], let jkt = confirmation["jkt"]?.stringValue else {
            throw Refusal(.tokenNotBound, "access token is not DPoP-bound (no cnf.jkt)")
        }
        if let storedKey, storedKey.key.thumbprint() != jkt {
            throw Refusal(.proof(.jktMismatch), "the access token is bound to another key than the caller's")
        }

        let verifier = DPoPVerifier(
            options: options.proof, replayCache: DPoPReplayAdapter(store: singleUse, scope: options.replayScope + ":" + request.realm.name)
        )
        let checksAth = options.requiresAth || proofClaims["ath"] != nil
        do throws(DPoPError) {
            let proof = try await verifier.verify(
                parsed: jws, claims: proofClaims, method: request.method, url: request.url, accessToken: checksAth ? compactToken : nil,
                expectedThumbprint: jkt, verificationKey: storedKey?.key, now: clock.now()
            )
            return Caller(claims: token.claims, proof: proof, owner: storedKey?.owner)
        } catch {
            throw Refusal(error.reason == .replayCheckFailed ? .unavailable : .proof(error.reason), error.message)
        }
    }

    /// RFC 9449 §7.1: exactly one `Authorization: DPoP <token>`, scheme case-insensitive; then the token itself.
    private func token(_ request: Request) async throws(Refusal) -> (compact: String, verified: VerifiedJWT) {
        let headers = request.authorization
        guard !headers.isEmpty else { throw Refusal(.tokenMissing, "DPoP access token required (Authorization: DPoP <token>)") }
        guard headers.count == 1 else { throw Refusal(.authorizationMalformed, "more than one Authorization header") }
        let parts = headers[0].split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2 else { throw Refusal(.authorizationMalformed, "malformed Authorization header") }
        let scheme = parts[0].lowercased()
        guard scheme == "dpop" || (scheme == "bearer" && options.acceptsBearerScheme) else {
            throw Refusal(
                .authorizationMalformed,
                scheme == "bearer" ? "DPoP-bound tokens must be sent with the DPoP scheme, not Bearer" : "unsupported authorization scheme"
            )
        }
        let compact = String(parts[1].trimmingBlanks)
        guard !compact.isEmpty else { throw Refusal(.authorizationMalformed, "access token is empty") }
        guard compact.utf8.count <= options.maxTokenSize else { throw Refusal(.tokenTooLarge, "access token is larger than \(options.maxTokenSize) bytes") }
        do {
            return (compact, try await issuer.verify(compact, realm: request.realm, now: clock.now()))
        } catch let error as JOSEError {
            throw Refusal(.tokenInvalid, "access token rejected: \(error.message)")
        } catch {
            throw Refusal(.unavailable, "token verification is temporarily unavailable")
        }
    }
}

extension DPoPResourceGuard.Refusal {
    /// The refusal as a protected resource answers it: 401 with a `WWW-Authenticate: DPoP` challenge naming the
    /// error and the algorithms accepted (RFC 9449 §7.1), or 503 when storage could not be asked.
    func oauthFailure(algorithms: Set<JWSAlgorithm>) -> OAuthFailure {
        let names = JWSAlgorithm.allCases.filter { algorithms.contains($0) }.map(\.rawValue).joined(separator: " ")
        let code: ErrorCode
        let error: String
        switch reason {
        case .unavailable:
            return OAuthFailure(status: 503, code: .unavailable, description: "token verification is temporarily unavailable")
        case .tokenMissing:
            // No credentials at all: a bare challenge (RFC 6750 §3.1).
            return OAuthFailure(status: 401, code: .invalidToken, description: message, challenge: "DPoP algs=\"\(names)\"", dpopReason: reason)
        case .authorizationMalformed, .tokenTooLarge, .tokenInvalid, .tokenNotBound:
            (code, error) = (.invalidToken, "invalid_token")
        default:
            (code, error) = (.invalidDPoPProof, "invalid_dpop_proof")
        }
        let escaped = message.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return OAuthFailure(
            status: 401, code: code, description: message,
            challenge: "DPoP error=\"\(error)\", error_description=\"\(escaped)\", algs=\"\(names)\"", dpopReason: reason
        )
    }
}
