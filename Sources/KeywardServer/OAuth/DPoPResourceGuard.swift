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
        /// The verified proof; nil only for a token that is not DPoP-bound, sent as `Bearer` where the policy allows
        /// that (`Scheme.dpopOrUnboundBearer`).
        public let proof: DPoPVerifier.Verified?
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

    /// What a gate accepts, stated once per use as a value: the proof's checks, how the token is presented,
    /// whether `ath` is required, where proofs are remembered and how refusals are counted.
    public struct Policy: Sendable {
        /// How the access token is presented.
        public enum Scheme: Sendable {
            /// `Authorization: DPoP <token>` only (RFC 9449 §7.1).
            case dpop
            /// `Bearer` tolerated where older clients need it (the push-MFA device API); the proof is required either way.
            case dpopOrBearer
            /// A DPoP-bound token with the DPoP scheme and its proof; a token that is not bound (issued without a proof,
            /// to a client that does not require one) as `Bearer` without one (RFC 6750 §2.1), never the other way round
            /// (RFC 9449 §7.1). The OpenID Connect userinfo endpoint.
            case dpopOrUnboundBearer
        }

        /// The proof's `ath` claim (the access token's hash).
        public enum AccessTokenHash: Sendable {
            /// Required (RFC 9449 §4.2).
            case required
            /// Checked only when the proof carries one (push MFA's `requireAth=false`).
            case checkedWhenPresent
        }

        public var proof: DPoPVerifier.Options
        public var scheme: Scheme
        public var accessTokenHash: AccessTokenHash
        /// Prefix of the replay cache's scope; the realm is appended.
        public var replayScope: String
        /// The metric label of refusals.
        public var endpoint: DPoPRejection.Endpoint
        public var maxTokenSize: Int

        public init(
            proof: DPoPVerifier.Options, scheme: Scheme = .dpop, accessTokenHash: AccessTokenHash = .required, replayScope: String = "dpop",
            endpoint: DPoPRejection.Endpoint = .resource, maxTokenSize: Int = 16384
        ) {
            self.proof = proof
            self.scheme = scheme
            self.accessTokenHash = accessTokenHash
            self.replayScope = replayScope
            self.endpoint = endpoint
            self.maxTokenSize = maxTokenSize
        }

        /// A protected resource of the OAuth core (RFC 9449 §7): the DPoP scheme, `ath` required, the proof's own key.
        public static func resource(proof: DPoPVerifier.Options) -> Policy { Policy(proof: proof) }
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

        /// A proof the verifier refused; a replay record that could not be read or written is the store's fault.
        init(_ error: DPoPError) {
            self.init(error.reason == .replayCheckFailed ? .unavailable : .proof(error.reason), error.message)
        }
    }

    private let issuer: AccessTokenIssuer
    private let singleUse: any SingleUseStore
    public let policy: Policy
    private let clock: any KeywardClock
    private let metrics: KeywardMetrics
    /// The registered devices: a token that names one (`device_id`) is refused once the device is removed.
    private let deviceKeys: DeviceKeys?

    init(
        issuer: AccessTokenIssuer, singleUse: any SingleUseStore, policy: Policy, clock: any KeywardClock, metrics: KeywardMetrics,
        deviceKeys: DeviceKeys? = nil
    ) {
        self.deviceKeys = deviceKeys
        self.issuer = issuer
        self.singleUse = singleUse
        self.policy = policy
        self.clock = clock
        self.metrics = metrics
    }

    /// A caller whose proof carries its key (`jwk`), whose thumbprint must be the token's `cnf.jkt`.
    public func authenticate(_ request: Request) async throws(Refusal) -> Caller {
        try await counted { () async throws(Refusal) in try await check(request, keys: nil as ProofHeaderKey?).caller }
    }

    /// A caller whose key is stored (`keys` finds it from the proof's header and claims before any signature is
    /// checked, and may refuse); its thumbprint must be the token's `cnf.jkt`. Returns what the lookup found besides.
    public func authenticate<Keys: StoredProofKeys>(_ request: Request, keys: Keys) async throws(Refusal) -> (caller: Caller, owner: Keys.Owner) {
        try await counted { () async throws(Refusal) in
            let (caller, owner) = try await check(request, keys: keys)
            guard let owner else { throw Refusal(.unavailable, "the stored key's lookup returned nothing") }
            return (caller, owner)
        }
    }

    private func counted<T>(_ body: () async throws(Refusal) -> T) async throws(Refusal) -> T {
        do throws(Refusal) {
            return try await body()
        } catch {
            metrics.dpopRejected(endpoint: policy.endpoint, reason: error.reason)
            throw error
        }
    }

    /// A proof of possession alone, where no access token exists yet (the broker's hand-off, taken with the key the
    /// hand-off names): one proof, its own `jwk`, method, URL, age and `jti` checked as for a token. No `ath`: there is
    /// no token for it to name.
    public func proofOfPossession(_ request: Request) async throws(Refusal) -> DPoPVerifier.Verified {
        try await counted { () async throws(Refusal) in
            let compactProof = try Self.singleProof(request)
            do throws(DPoPError) {
                let proof = try await verifier(realm: request.realm).verify(proof: compactProof, method: request.method, url: request.url, now: clock.now())
                guard proof.claims["ath"] == nil else {
                    throw DPoPError(code: .invalidProof, reason: .athMismatch, message: "DPoP proof names an access token (ath), and none is sent")
                }
                try await refuseRemovedDeviceKey(proof.thumbprint, realm: request.realm.name)
                return proof
            } catch {
                throw Refusal(error)
            }
        }
    }

    /// A proof with no token (the broker's take) by a key a removed device held, or one it rotated away from.
    private func refuseRemovedDeviceKey(_ jkt: String, realm: String) async throws(DPoPError) {
        guard let deviceKeys else { return }
        let device: RegisteredDeviceKey?
        do {
            device = try await deviceKeys.device(realm: realm, jkt: jkt)
        } catch {
            throw DPoPError(code: .invalidProof, reason: .replayCheckFailed, message: "the proof's device cannot be checked right now")
        }
        if let device, !device.usable {
            throw DPoPError(code: .invalidProof, reason: .jktMismatch, message: "the proof's key belongs to a device that was removed")
        }
    }

    /// Only the access token, for the push-MFA enrollment path that sends no proof (the original's legacy clients).
    public func verifiedToken(_ request: Request) async throws(Refusal) -> VerifiedJWT {
        try await counted { () async throws(Refusal) in try await token(request).verified }
    }

    private func check<Keys: StoredProofKeys>(_ request: Request, keys: Keys?) async throws(Refusal) -> (caller: Caller, owner: Keys.Owner?) {
        let (compactToken, token, scheme) = try await token(request)
        if policy.scheme == .dpopOrUnboundBearer, scheme == "bearer" {
            guard token.claims["cnf"] == nil else {
                throw Refusal(.authorizationMalformed, "DPoP-bound tokens must be sent with the DPoP scheme, not Bearer")
            }
            guard request.dpopProofs.isEmpty else { throw Refusal(.authorizationMalformed, "a Bearer token comes without a DPoP proof") }
            return (Caller(claims: token.claims, proof: nil), nil)
        }
        let compactProof = try Self.singleProof(request)
        guard compactProof.utf8.count <= policy.proof.maxProofSize else {
            throw Refusal(.proof(.tooLarge), "DPoP proof is larger than \(policy.proof.maxProofSize) bytes")
        }
        let jws: JWS
        let proofClaims: JSONObject
        do throws(JOSEError) {
            jws = try JWS.parse(compactProof, maxSize: policy.proof.maxProofSize)
            proofClaims = try jws.claims()
        } catch {
            throw Refusal(.proof(.malformed), "DPoP proof: \(error.message)")
        }

        let storedKey = try await keys?.key(for: jws, claims: proofClaims, realm: request.realm)
        guard case .object(let confirmation)? = token.claims["cnf"], let jkt = confirmation["jkt"]?.stringValue else {
            throw Refusal(.tokenNotBound, "access token is not DPoP-bound (no cnf.jkt)")
        }
        if let storedKey, storedKey.key.thumbprint() != jkt {
            throw Refusal(.proof(.jktMismatch), "the access token is bound to another key than the caller's")
        }

        let verifier = verifier(realm: request.realm)
        let checksAth = policy.accessTokenHash == .required || proofClaims["ath"] != nil
        let proof: DPoPVerifier.Verified
        do throws(DPoPError) {
            proof = try await verifier.verify(
                parsed: jws, claims: proofClaims, method: request.method, url: request.url, accessToken: checksAth ? compactToken : nil,
                expectedThumbprint: jkt, verificationKey: storedKey?.key, now: clock.now()
            )
        } catch {
            throw Refusal(error)
        }
        try await checkDevice(token.claims, jkt: jkt, realm: request.realm.name)
        return (Caller(claims: token.claims, proof: proof), storedKey?.owner)
    }

    /// A token issued to a registered device (`device_id`, bound to its key) stands only while that device does:
    /// removed, rejected or re-keyed, it is refused from the next request, on every node (the device is read, not
    /// cached). Tokens that name no device cost nothing here.
    private func checkDevice(_ claims: JSONObject, jkt: String, realm: String) async throws(Refusal) {
        guard let deviceKeys, let deviceId = claims["device_id"]?.stringValue else { return }
        let device: RegisteredDeviceKey?
        do {
            device = try await deviceKeys.device(realm: realm, jkt: jkt)
        } catch {
            throw Refusal(.unavailable, "the token's device cannot be checked right now")
        }
        guard let device, device.usable, device.deviceId == deviceId, device.appId == claims["device_app"]?.stringValue else {
            throw Refusal(.deviceRemoved, "the device this token was issued to was removed, or no longer holds its key")
        }
    }

    /// RFC 9449 §7.1: exactly one `DPoP` header.
    private static func singleProof(_ request: Request) throws(Refusal) -> String {
        guard request.dpopProofs.count == 1 else {
            throw request.dpopProofs.isEmpty
                ? Refusal(.proofMissing, "DPoP proof required (DPoP header)") : Refusal(.multipleProofs, "more than one DPoP header")
        }
        return request.dpopProofs[0]
    }

    /// The proof checks of this gate's policy, its `jti`s spent in Core's single-use records under the realm.
    private func verifier(realm: Realm) -> DPoPVerifier {
        DPoPVerifier(options: policy.proof, replayCache: DPoPReplayAdapter(store: singleUse, scope: policy.replayScope + ":" + realm.name))
    }

    /// RFC 9449 §7.1: exactly one `Authorization: DPoP <token>`, scheme case-insensitive; then the token itself.
    private func token(_ request: Request) async throws(Refusal) -> (compact: String, verified: VerifiedJWT, scheme: String) {
        let headers = request.authorization
        guard !headers.isEmpty else { throw Refusal(.tokenMissing, "DPoP access token required (Authorization: DPoP <token>)") }
        guard headers.count == 1 else { throw Refusal(.authorizationMalformed, "more than one Authorization header") }
        let parts = headers[0].split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2 else { throw Refusal(.authorizationMalformed, "malformed Authorization header") }
        let scheme = parts[0].lowercased()
        guard scheme == "dpop" || (scheme == "bearer" && policy.scheme != .dpop) else {
            throw Refusal(
                .authorizationMalformed,
                scheme == "bearer" ? "DPoP-bound tokens must be sent with the DPoP scheme, not Bearer" : "unsupported authorization scheme"
            )
        }
        let compact = String(parts[1].trimmingBlanks)
        guard !compact.isEmpty else { throw Refusal(.authorizationMalformed, "access token is empty") }
        guard compact.utf8.count <= policy.maxTokenSize else { throw Refusal(.tokenTooLarge, "access token is larger than \(policy.maxTokenSize) bytes") }
        do {
            return (compact, try await issuer.verify(compact, realm: request.realm, now: clock.now()), scheme)
        } catch let error as JOSEError {
            throw Refusal(.tokenInvalid, "access token rejected: \(error.message)")
        } catch {
            throw Refusal(.unavailable, "token verification is temporarily unavailable")
        }
    }
}

/// A key stored for a caller of the DPoP gate (an enrolled device's), found from the proof's header and claims
/// before any signature is checked; the lookup may refuse with the part's own error (`Refusal.partError`).
public protocol StoredProofKeys: Sendable {
    /// What the lookup found besides the key (a push-MFA device and its user), handed back with the caller.
    associatedtype Owner: Sendable

    func key(for proof: JWS, claims: JSONObject, realm: Realm) async throws(DPoPResourceGuard.Refusal) -> (key: JWK, owner: Owner)
}

/// No stored key: the proof's own `jwk` is verified (`DPoPResourceGuard.authenticate(_:)`).
private struct ProofHeaderKey: StoredProofKeys {
    func key(for proof: JWS, claims: JSONObject, realm: Realm) async throws(DPoPResourceGuard.Refusal) -> (key: JWK, owner: Void) {
        throw DPoPResourceGuard.Refusal(.unavailable, "no stored key")
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
        case .authorizationMalformed, .tokenTooLarge, .tokenInvalid, .tokenNotBound, .deviceRemoved:
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
