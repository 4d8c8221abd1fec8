// Authenticating push-MFA devices through the DPoP gate with their stored keys, with the original's checks.
import Foundation
import KeywardJOSE

/// DPoP device authentication of the push-MFA API (docs/PUSH-MFA-PROTOCOL.md §3.2), through the one DPoP gate: a realm-signed,
/// DPoP-bound access token plus a proof whose `sub` + `deviceId` name the enrolled credential, verified with the
/// **stored** key. What is push MFA's own stays here: the original's checks of the unverified proof and their
/// order, finding the device and its user, and the original's status and message for every refusal.
struct DeviceAuthenticator: Sendable {
    /// An authenticated device.
    struct Device: Sendable {
        let user: User
        let credential: PushCredential
        let key: JWK
        let accessTokenClaims: JSONObject
    }

    /// The headers and URL of one request, as the route saw them: the same as the resource guard's.
    typealias Request = DPoPResourceGuard.Request
    typealias Refusal = DPoPResourceGuard.Refusal

    /// The gate, configured for the device API (`DeviceAuthenticator.gateOptions`).
    let gate: DPoPResourceGuard
    let credentials: any PushCredentialStore
    let users: UserService
    let clock: any KeywardClock
    let audit: AuditLog
    /// The registered devices: a credential made on one answers nothing once the device is removed or re-keyed.
    var deviceKeys = DeviceKeys()
    let metrics: KeywardMetrics
    /// One audit row per realm and reason a minute for refusals (metrics count them all).
    let refusalAudit: RefusalAuditSampler
    /// What the gate checks `htu` against, and the largest body a device call may send.
    let publicURL: String
    let maxBodySize: Int
    /// As the middleware in front of a device call (DeviceCallMiddleware.swift): what the original checks before
    /// authentication, and whether the route reads a JSON body.
    var checkedFirst = CheckedFirst.nothing
    var readsBody = false

    static let algorithms: Set<JWSAlgorithm> = [.rs256, .rs384, .rs512, .es256, .es384, .es512]

    /// The device API's policy of the gate: `Bearer` tolerated for the original's older clients,
    /// `dpop-require-ath`, `iat` within ±`dpop-iat-tolerance-seconds`, `jti` remembered `dpop-jti-ttl-seconds`.
    static func gatePolicy(requireAth: Bool, iatTolerance: TimeInterval, jtiLifetime: TimeInterval) -> DPoPResourceGuard.Policy {
        DPoPResourceGuard.Policy(
            proof: DPoPVerifier.Options(
                allowedAlgorithms: algorithms, maxAge: iatTolerance, maxFutureSkew: iatTolerance,
                maxProofSize: PushMFALimits.jwtLength, maxJTILength: PushMFALimits.dpopJTILength, replayLifetime: jtiLifetime
            ),
            scheme: .dpopOrBearer, accessTokenHash: requireAth ? .required : .checkedWhenPresent, replayScope: "push-mfa:dpop",
            endpoint: .pushMFA, maxTokenSize: PushMFALimits.jwtLength
        )
    }

    /// Authenticates an enrolled device.
    func authenticate(_ request: Request) async throws(PushMFAError) -> Device {
        let found: Device
        let claims: JSONObject
        do throws(Refusal) {
            let (caller, owner) = try await gate.authenticate(request, keys: EnrolledDeviceKeys(credentials: credentials, users: users, deviceKeys: deviceKeys))
            (found, claims) = (owner, caller.claims)
        } catch {
            throw await reported(error, request: request)
        }
        // Checked once the device has proven itself, so it tells a stranger nothing about the account.
        guard found.user.enabled else {
            metrics.dpopRejected(endpoint: .pushMFA, reason: .userDisabled)
            throw await reported(Refusal(.userDisabled, "user disabled", partError: PushMFAError.forbidden("User is disabled")), request: request)
        }
        return Device(user: found.user, credential: found.credential, key: found.key, accessTokenClaims: claims)
    }

    /// An enrolled device's key: the credential the proof's `sub` + `deviceId` name (push MFA's own table) and its
    /// user (through Accounts' service), read at once.
    private struct EnrolledDeviceKeys: StoredProofKeys {
        let credentials: any PushCredentialStore
        let users: UserService
        let deviceKeys: DeviceKeys

        func key(for proof: JWS, claims: JSONObject, realm: Realm) async throws(Refusal) -> (key: JWK, owner: Device) {
            let named = try DeviceAuthenticator.preChecked(proof, claims)
            let owner: (user: User?, credential: PushCredential?)
            do {
                async let user = users.user(realm: realm.name, id: named.subject)
                async let credential = credentials.credential(realm: realm.name, userId: named.subject, deviceId: named.deviceId)
                owner = (try await user, try await credential)
            } catch {
                throw Refusal(.unavailable, "device lookup failed", partError: PushMFAError.unavailable)
            }
            guard let user = owner.user else { throw Refusal(.unknownDevice, "no such user", partError: PushMFAError.notFound("User not found")) }
            guard let credential = owner.credential, let key = try? JWK(jsonString: credential.publicKeyJWK) else {
                throw Refusal(.unknownDevice, "no such device", partError: PushMFAError.forbidden("Device not registered for user"))
            }
            if credential.registeredDeviceId != nil {
                // Made on a registered device: it stands only while the device does, on this key.
                let device: RegisteredDeviceKey?
                do {
                    device = try await deviceKeys.liveDevice(of: credential, realm: realm.name)
                } catch {
                    throw Refusal(.unavailable, "device lookup failed", partError: PushMFAError.unavailable)
                }
                guard device != nil else {
                    throw Refusal(.deviceRemoved, "the registered device was removed", partError: PushMFAError.forbidden("Device not registered for user"))
                }
            }
            return (key, Device(user: user, credential: credential, key: key, accessTokenClaims: [:]))
        }
    }

    /// Authentication for `/enroll/complete`, where no key is stored yet: the proof must be signed by the key
    /// being enrolled, and name the same user and device as the enrollment token (docs/PUSH-MFA-PROTOCOL.md §3.4 step 7).
    func authenticateEnrollment(_ request: Request, enrollingKey: JWK, subject: String, deviceId: String) async throws(PushMFAError) {
        do throws(Refusal) {
            _ = try await gate.authenticate(request, keys: EnrollingKey(key: enrollingKey, subject: subject, deviceId: deviceId))
        } catch {
            throw await reported(error, request: request)
        }
    }

    /// The key being enrolled, for a proof that names the enrollment token's user and device.
    private struct EnrollingKey: StoredProofKeys {
        let key: JWK
        let subject: String
        let deviceId: String

        func key(for proof: JWS, claims: JSONObject, realm: Realm) async throws(Refusal) -> (key: JWK, owner: Void) {
            let named = try DeviceAuthenticator.preChecked(proof, claims)
            guard named.subject == subject else {
                throw Refusal(.proof(.invalidClaim), "sub mismatch", partError: PushMFAError.forbidden("DPoP proof sub mismatch"))
            }
            guard named.deviceId == deviceId else {
                throw Refusal(.proof(.invalidClaim), "deviceId mismatch", partError: PushMFAError.forbidden("DPoP proof deviceId mismatch"))
            }
            return (key, ())
        }
    }

    /// The original's legacy path: DPoP not required and only `Authorization` sent, so only the token is checked.
    func authenticateEnrollmentToken(_ request: Request) async throws(PushMFAError) {
        do throws(Refusal) {
            _ = try await gate.verifiedToken(request)
        } catch {
            throw await reported(error, request: request)
        }
    }

    /// The original's checks of the proof before the device is looked up, with its messages and in its order.
    fileprivate static func preChecked(_ proof: JWS, _ claims: JSONObject) throws(Refusal) -> (subject: String, deviceId: String) {
        func refuse(_ reason: DPoPError.Reason, _ error: PushMFAError) -> Refusal {
            Refusal(.proof(reason), error.message, partError: error)
        }
        guard let algorithm = JWSAlgorithm(rawValue: proof.algorithmName), algorithms.contains(algorithm) else {
            throw refuse(.alg, .badRequest("Unsupported DPoP proof algorithm: \(proof.algorithmName.prefix(16))"))
        }
        guard proof.header["typ"]?.stringValue?.lowercased() == "dpop+jwt" else { throw refuse(.typ, .badRequest("Invalid DPoP proof typ")) }
        guard claims["htm"]?.stringValue != nil else { throw refuse(.missingClaim, .missingField("htm")) }
        guard claims["htu"]?.stringValue != nil else { throw refuse(.missingClaim, .missingField("htu")) }
        guard claims["iat"]?.numberValue != nil else { throw refuse(.missingClaim, .badRequest("DPoP proof missing iat")) }
        do throws(PushMFAError) {
            _ = try PushMFAInput.required(claims, "jti", maxLength: PushMFALimits.dpopJTILength)
        } catch {
            throw refuse(.jti, error)
        }
        if let ath = claims["ath"], (ath.stringValue?.count ?? 0) > 128 { throw refuse(.invalidClaim, .fieldTooLong("ath")) }
        do throws(PushMFAError) {
            let subject = try PushMFAInput.required(claims, "sub", maxLength: PushMFALimits.userIdLength)
            let deviceId = try PushMFAInput.required(claims, "deviceId", maxLength: PushMFALimits.deviceIdLength)
            return (subject, deviceId)
        } catch {
            throw refuse(.invalidClaim, error)
        }
    }

    /// The original's status and message for a refusal of the gate.
    static func pushMFAError(_ refusal: DPoPResourceGuard.Refusal) -> PushMFAError {
        if let own = refusal.partError as? PushMFAError { return own }
        switch refusal.reason {
        case .tokenMissing, .authorizationMalformed: return .unauthorized("DPoP access token required")
        case .tokenTooLarge: return .fieldTooLong("access_token")
        case .tokenInvalid: return .unauthorized("Invalid access token")
        case .tokenNotBound: return .forbidden("Access token missing DPoP binding")
        case .proofMissing: return .unauthorized("DPoP proof required")
        case .multipleProofs: return .badRequest("Invalid DPoP proof")
        case .unavailable: return .unavailable
        case .unknownDevice, .userDisabled, .deviceRemoved: return .forbidden("Device not registered for user")
        case .proof(let reason):
            switch reason {
            case .htmMismatch: return .forbidden("DPoP proof htm mismatch")
            case .htuMismatch: return .forbidden("DPoP proof htu mismatch")
            case .iatWindow: return .badRequest("DPoP proof expired")
            case .athMissing: return .missingField("ath")
            case .athMismatch: return .forbidden("DPoP proof ath mismatch")
            case .jktMismatch: return .forbidden("Access token DPoP binding mismatch")
            case .badSignature: return .forbidden("Invalid DPoP proof signature")
            case .replayed: return .forbidden("DPoP proof replay detected")
            case .alg: return .badRequest("JWK algorithm mismatch")
            case .tooLarge: return .fieldTooLong("DPoP")
            case .jti: return .fieldTooLong("jti")
            case .replayCheckFailed: return .unavailable
            default: return .badRequest("Invalid DPoP proof")
            }
        }
    }

    /// Audits a refusal of the caller (not an outage) and returns the error to answer with. The gate has counted it.
    private func reported(_ refusal: DPoPResourceGuard.Refusal, request: Request) async -> PushMFAError {
        let error = Self.pushMFAError(refusal)
        guard (400..<500).contains(error.status) else { return error }
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
