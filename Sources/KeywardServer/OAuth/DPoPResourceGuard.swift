import Foundation
import KeywardJOSE

/// Protects a resource with DPoP-bound access tokens (RFC 9449 §7): verifies the realm-signed token, the
/// proof, `ath`, and that the proof key is the one the token is bound to (`cnf.jkt`).
/// Every part that exposes DPoP-protected routes uses this one guard.
public final class DPoPResourceGuard: Sendable {
    public struct Caller: Sendable {
        public let claims: JSONObject
        public let proof: DPoPVerifier.Verified
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

    private let issuer: AccessTokenIssuer
    private let replayStore: any ReplayStore
    private let options: DPoPVerifier.Options
    private let clock: any KeywardClock
    private let metrics: KeywardMetrics
    /// `Bearer <token>` is tolerated only where older clients need it (the push-MFA device API); the proof is still required.
    private let acceptsBearerScheme: Bool
    private let challengeAlgorithms: String

    public init(
        issuer: AccessTokenIssuer, replayStore: any ReplayStore, options: DPoPVerifier.Options, clock: any KeywardClock,
        metrics: KeywardMetrics, acceptsBearerScheme: Bool = false
    ) {
        self.issuer = issuer
        self.replayStore = replayStore
        self.options = options
        self.clock = clock
        self.metrics = metrics
        self.acceptsBearerScheme = acceptsBearerScheme
        self.challengeAlgorithms = JWSAlgorithm.allCases.filter { options.allowedAlgorithms.contains($0) }.map(\.rawValue).joined(separator: " ")
    }

    public func authenticate(_ request: Request) async throws(OAuthFailure) -> Caller {
        do {
            return try await check(request)
        } catch let failure as OAuthFailure {
            metrics.dpopRejected(endpoint: .resource, reason: failure.dpopReason ?? .tokenInvalid)
            throw failure
        } catch {
            throw OAuthFailure(status: 503, code: .unavailable, description: "token verification is temporarily unavailable")
        }
    }

    private func check(_ request: Request) async throws -> Caller {
        let token = try accessToken(from: request.authorization)
        let now = clock.now()
        let verified: VerifiedJWT
        do {
            verified = try await issuer.verify(token, realm: request.realm, now: now)
        } catch let error as JOSEError {
            throw invalidToken("access token rejected: \(error.message)")
        }
        guard case .object(let confirmation)? = verified.claims["cnf"], let jkt = confirmation["jkt"]?.stringValue else {
            throw invalidToken("access token is not DPoP-bound (no cnf.jkt)")
        }
        guard request.dpopProofs.count == 1 else {
            throw invalidProof(request.dpopProofs.isEmpty ? "DPoP proof required (DPoP header)" : "more than one DPoP header", reason: request.dpopProofs.isEmpty ? .proofMissing : .multipleProofs)
        }
        let verifier = DPoPVerifier(options: options, replayCache: DPoPReplayAdapter(store: replayStore, scope: "dpop:" + request.realm.name))
        do throws(DPoPError) {
            let proof = try await verifier.verify(
                proof: request.dpopProofs[0], method: request.method, url: request.url, accessToken: token,
                expectedThumbprint: jkt, now: now
            )
            return Caller(claims: verified.claims, proof: proof)
        } catch {
            throw invalidProof(error.message, reason: .proof(error.reason))
        }
    }

    /// RFC 9449 §7.1: `Authorization: DPoP <token>`, scheme case-insensitive; exactly one header.
    private func accessToken(from headers: [String]) throws -> String {
        guard !headers.isEmpty else {
            throw OAuthFailure(status: 401, code: .invalidToken, description: "DPoP access token required (Authorization: DPoP <token>)", challenge: "DPoP algs=\"\(challengeAlgorithms)\"")
        }
        guard headers.count == 1 else { throw invalidToken("more than one Authorization header") }
        let parts = headers[0].split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2 else { throw invalidToken("malformed Authorization header") }
        let scheme = parts[0].lowercased()
        guard scheme == "dpop" || (scheme == "bearer" && acceptsBearerScheme) else {
            throw invalidToken(scheme == "bearer" ? "DPoP-bound tokens must be sent with the DPoP scheme, not Bearer" : "unsupported authorization scheme")
        }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        guard !token.isEmpty, token.utf8.count <= options.maxProofSize * 2 else { throw invalidToken("access token is empty or too large") }
        return token
    }

    private func invalidToken(_ description: String) -> OAuthFailure {
        OAuthFailure(status: 401, code: .invalidToken, description: description, challenge: challenge(error: "invalid_token", description: description))
    }

    private func invalidProof(_ description: String, reason: DPoPRejection) -> OAuthFailure {
        OAuthFailure(status: 401, code: .invalidDPoPProof, description: description, challenge: challenge(error: "invalid_dpop_proof", description: description), dpopReason: reason)
    }

    private func challenge(error: String, description: String) -> String {
        let escaped = description.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "DPoP error=\"\(error)\", error_description=\"\(escaped)\", algs=\"\(challengeAlgorithms)\""
    }
}
