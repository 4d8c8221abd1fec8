import Foundation
import KeywardJOSE

/// DPoP device authentication of the push-MFA API (reference §2.3): a realm-signed, DPoP-bound access token plus
/// a proof whose `sub` + `deviceId` name the enrolled credential, verified with the **stored** key.
struct DeviceAuthenticator: Sendable {
    struct Options: Sendable {
        /// `dpop-require-ath`: when false, `ath` is checked only if the proof carries one (older simulators).
        var requireAth = true
        /// `dpop-iat-tolerance-seconds`.
        var iatTolerance: TimeInterval = 120
        /// `dpop-jti-ttl-seconds`.
        var jtiLifetime: TimeInterval = 300
    }

    /// An authenticated device.
    struct Device: Sendable {
        let user: User
        let credential: PushCredential
        let key: JWK
        let accessTokenClaims: JSONObject
    }

    /// The headers and URL of one request, as the route saw them: the same as the resource guard's.
    typealias Request = DPoPResourceGuard.Request

    let accessTokens: AccessTokenIssuer
    let replayStore: any ReplayStore
    let credentials: any PushCredentialStore
    let clock: any KeywardClock
    let audit: AuditLog
    let metrics: KeywardMetrics
    let options: Options
    /// One audit row per realm and reason a minute for refusals (metrics count them all).
    let refusalAudit: RefusalAuditSampler

    static let algorithms: Set<JWSAlgorithm> = [.rs256, .rs384, .rs512, .es256, .es384, .es512]

    /// A refusal and the closed reason metrics count it under.
    private struct Refusal: Error {
        let error: PushMFAError
        let reason: DPoPRejection

        init(_ error: PushMFAError, _ reason: DPoPRejection) {
            self.error = error
            self.reason = reason
        }
    }

    /// Authenticates an enrolled device.
    func authenticate(_ request: Request) async throws(PushMFAError) -> Device {
        do throws(Refusal) {
            let token = try await verifiedAccessToken(request)
            let proof = try parsedProof(request)
            guard let owner = try await lookup({
                try await credentials.userAndCredential(realm: request.realm.name, userId: proof.subject, deviceId: proof.deviceId)
            }) else {
                throw Refusal(.notFound("User not found"), .unknownDevice)
            }
            guard let credential = owner.credential else { throw Refusal(.forbidden("Device not registered for user"), .unknownDevice) }
            let user = owner.user
            let key: JWK
            do {
                key = try JWK(jsonString: credential.publicKeyJWK)
            } catch {
                throw Refusal(.forbidden("Device not registered for user"), .unknownDevice)
            }
            try await verifyProof(proof.compact, request: request, token: token, key: key)
            // Checked once the device has proven itself, so it tells a stranger nothing about the account.
            guard user.enabled else { throw Refusal(.forbidden("User is disabled"), .userDisabled) }
            return Device(user: user, credential: credential, key: key, accessTokenClaims: token.claims)
        } catch {
            throw await reported(error, request: request)
        }
    }

    /// Authentication for `/enroll/complete`, where no key is stored yet: the proof must be signed by the key
    /// being enrolled, and name the same user and device as the enrollment token (reference §2.5 step 10).
    func authenticateEnrollment(_ request: Request, enrollingKey: JWK, subject: String, deviceId: String) async throws(PushMFAError) {
        do throws(Refusal) {
            let token = try await verifiedAccessToken(request)
            let proof = try parsedProof(request)
            guard proof.subject == subject else { throw Refusal(.forbidden("DPoP proof sub mismatch"), .proof(.invalidClaim)) }
            guard proof.deviceId == deviceId else { throw Refusal(.forbidden("DPoP proof deviceId mismatch"), .proof(.invalidClaim)) }
            try await verifyProof(proof.compact, request: request, token: token, key: enrollingKey)
        } catch {
            throw await reported(error, request: request)
        }
    }

    /// The original's legacy path: DPoP not required and only `Authorization` sent, so only the token is checked.
    func authenticateEnrollmentToken(_ request: Request) async throws(PushMFAError) {
        do throws(Refusal) {
            _ = try await verifiedAccessToken(request)
        } catch {
            throw await reported(error, request: request)
        }
    }

    // MARK: - Steps

    private func verifiedAccessToken(_ request: Request) async throws(Refusal) -> VerifiedJWT {
        let required = Refusal(.unauthorized("DPoP access token required"), .tokenMissing)
        guard request.authorization.count == 1 else { throw required }
        let parts = request.authorization[0].split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        let scheme = parts.first?.lowercased()
        // `Bearer` is accepted for the original's older clients; the proof is required either way.
        guard parts.count == 2, scheme == "dpop" || scheme == "bearer" else { throw required }
        let token = String(parts[1].trimmingBlanks)
        guard token.utf8.count <= PushMFALimits.jwtLength else { throw Refusal(.fieldTooLong("access_token"), .tokenInvalid) }
        do {
            // Closes a gap of the original: the issuer is the configured public URL (not the request's Host),
            // and the audience is checked.
            return try await accessTokens.verify(token, realm: request.realm, now: clock.now())
        } catch {
            throw Refusal(.unauthorized("Invalid access token"), .tokenInvalid)
        }
    }

    private struct ParsedProof {
        let compact: String
        let subject: String
        let deviceId: String
    }

    /// Reads what the credential lookup needs from the (not yet verified) proof, with the original's messages.
    private func parsedProof(_ request: Request) throws(Refusal) -> ParsedProof {
        guard let compact = request.dpopProofs.first, request.dpopProofs.count == 1 else {
            throw request.dpopProofs.isEmpty
                ? Refusal(.unauthorized("DPoP proof required"), .proofMissing) : Refusal(.badRequest("Invalid DPoP proof"), .multipleProofs)
        }
        guard compact.utf8.count <= PushMFALimits.jwtLength else { throw Refusal(.fieldTooLong("DPoP"), .proof(.tooLarge)) }
        let proof = try refusing(.proof(.malformed)) { () throws(PushMFAError) in try DeviceJWT(compact, name: "DPoP proof") }
        let (jws, claims) = (proof.jws, proof.claims)
        guard jws.header["typ"]?.stringValue?.lowercased() == "dpop+jwt" else { throw Refusal(.badRequest("Invalid DPoP proof typ"), .proof(.typ)) }
        guard claims["htm"]?.stringValue != nil else { throw Refusal(.missingField("htm"), .proof(.missingClaim)) }
        guard claims["htu"]?.stringValue != nil else { throw Refusal(.missingField("htu"), .proof(.missingClaim)) }
        guard claims["iat"]?.numberValue != nil else { throw Refusal(.badRequest("DPoP proof missing iat"), .proof(.missingClaim)) }
        _ = try refusing(.proof(.jti)) { () throws(PushMFAError) in try PushMFAInput.required(claims, "jti", maxLength: PushMFALimits.dpopJTILength) }
        if let ath = claims["ath"], (ath.stringValue?.count ?? 0) > 128 { throw Refusal(.fieldTooLong("ath"), .proof(.invalidClaim)) }
        let subject = try refusing(.proof(.invalidClaim)) { () throws(PushMFAError) in
            try PushMFAInput.required(claims, "sub", maxLength: PushMFALimits.userIdLength)
        }
        let deviceId = try refusing(.proof(.invalidClaim)) { () throws(PushMFAError) in
            try PushMFAInput.required(claims, "deviceId", maxLength: PushMFALimits.deviceIdLength)
        }
        return ParsedProof(compact: compact, subject: subject, deviceId: deviceId)
    }

    private func refusing<T>(_ reason: DPoPRejection, _ body: () throws(PushMFAError) -> T) throws(Refusal) -> T {
        do {
            return try body()
        } catch {
            throw Refusal(error, reason)
        }
    }

    /// Signature with the given key, `htm`/`htu`/`iat`, `cnf.jkt` binding, `ath`, then the replay cache (last, so
    /// rejected proofs never fill it).
    private func verifyProof(_ compact: String, request: Request, token: VerifiedJWT, key: JWK) async throws(Refusal) {
        guard case .object(let confirmation)? = token.claims["cnf"], let jkt = confirmation["jkt"]?.stringValue else {
            throw Refusal(.forbidden("Access token missing DPoP binding"), .tokenNotBound)
        }
        guard jkt == key.thumbprint() else { throw Refusal(.forbidden("Access token DPoP binding mismatch"), .proof(.jktMismatch)) }
        let accessToken = request.authorization.first.map { String($0.split(separator: " ", maxSplits: 1)[1].trimmingBlanks) }
        let proofHasAth = (try? JWS.parse(compact, maxSize: PushMFALimits.jwtLength).claims()["ath"]) != nil
        let verifier = DPoPVerifier(
            options: DPoPVerifier.Options(
                allowedAlgorithms: Self.algorithms, maxAge: options.iatTolerance, maxFutureSkew: options.iatTolerance,
                maxProofSize: PushMFALimits.jwtLength, maxJTILength: PushMFALimits.dpopJTILength, replayLifetime: options.jtiLifetime
            ),
            replayCache: DPoPReplayAdapter(store: replayStore, scope: "push-mfa:dpop:" + request.realm.name)
        )
        do throws(DPoPError) {
            _ = try await verifier.verify(
                proof: compact, method: request.method, url: request.url,
                accessToken: options.requireAth || proofHasAth ? accessToken : nil,
                expectedThumbprint: jkt, verificationKey: key, now: clock.now()
            )
        } catch {
            throw Refusal(Self.map(error), .proof(error.reason))
        }
    }

    /// The original's status and message for each DPoP check.
    static func map(_ error: DPoPError) -> PushMFAError {
        switch error.reason {
        case .htmMismatch: .forbidden("DPoP proof htm mismatch")
        case .htuMismatch: .forbidden("DPoP proof htu mismatch")
        case .iatWindow: .badRequest("DPoP proof expired")
        case .athMissing: .missingField("ath")
        case .athMismatch: .forbidden("DPoP proof ath mismatch")
        case .jktMismatch: .forbidden("Access token DPoP binding mismatch")
        case .badSignature: .forbidden("Invalid DPoP proof signature")
        case .replayed: .forbidden("DPoP proof replay detected")
        case .alg: .badRequest("JWK algorithm mismatch")
        case .tooLarge: .fieldTooLong("DPoP")
        case .jti: .fieldTooLong("jti")
        case .replayCheckFailed: .unavailable
        default: .badRequest("Invalid DPoP proof")
        }
    }

    private func lookup<T>(_ body: () async throws -> T) async throws(Refusal) -> T {
        do {
            return try await body()
        } catch {
            throw Refusal(.unavailable, .unavailable)
        }
    }

    /// Counts and audits a refusal of the caller (not an outage), and returns the error to answer with.
    private func reported(_ refusal: Refusal, request: Request) async -> PushMFAError {
        let error = refusal.error
        guard (400..<500).contains(error.status) else { return error }
        metrics.dpopRejected(endpoint: .pushMFA, reason: refusal.reason)
        let key = RefusalAuditSampler.Key(realm: request.realm.name, reason: refusal.reason.label)
        guard let folded = refusalAudit.admit(key, now: clock.now()) else { return error }
        var details = [
            "status": String(error.status), "reason": error.message, "method": request.method, "path": URL(string: request.url)?.path ?? "",
        ]
        if folded > 0 { details["suppressed"] = String(folded) }
        await audit.record(.dpopAuthenticationFailed, realm: request.realm.name, userId: nil, details: details)
        return error
    }
}
