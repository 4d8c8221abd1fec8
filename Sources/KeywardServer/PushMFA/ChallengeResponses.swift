// The device's side of a login challenge: listing pending challenges and approving or denying one (docs/PUSH-MFA-PROTOCOL.md §3.5-3.6).
import Foundation
import KeywardHTTPInput
import KeywardJOSE
import KeywardWire

extension PushMFAService {
    /// Endpoint 3: the pending login challenges this device may answer (docs/PUSH-MFA-PROTOCOL.md §3.5).
    func pendingChallenges(userId: String, device: DeviceAuthenticator.Device) async throws(PushMFAError) -> PendingChallengesResponse {
        guard userId == device.user.id else { return PendingChallengesResponse(challenges: []) }
        let now = clock.now()
        let pending = try await stored {
            try await challenges.pendingChallenges(realm: device.credential.realm, userId: device.user.id, kind: .authentication, now: now)
        }
        // "Last used" for the account page; minute precision is plenty and spares a write per poll.
        if device.credential.lastUsedAt.map({ now.timeIntervalSince($0) >= 60 }) ?? true {
            try? await credentials.touch(realm: device.credential.realm, id: device.credential.id, at: now)
        }
        return PendingChallengesResponse(challenges: pending.filter { $0.credentialId == nil || $0.credentialId == device.credential.id }.map { challenge in
            PendingChallenge(
                userId: device.user.id, username: device.user.username, cid: challenge.id,
                expiresAt: Int64(challenge.expiresAt.timeIntervalSince1970), createdAt: Int64(challenge.createdAt.timeIntervalSince1970),
                clientId: challenge.clientId, clientName: nil, userVerification: Self.prompt(challenge.userVerification)
            )
        })
    }

    static func prompt(_ verification: UserVerification) -> UserVerificationPrompt? {
        switch verification {
        case .none: nil
        case .numberMatch(_, let options): UserVerificationPrompt(type: "number-match", numbers: options, pinLength: nil)
        case .pin(let pin): UserVerificationPrompt(type: "pin", numbers: nil, pinLength: pin.count)
        }
    }

    /// Endpoint 4: approve or deny (docs/PUSH-MFA-PROTOCOL.md §3.6). Keyward authenticates the device **before** looking the
    /// challenge up, so a stranger cannot probe which challenge ids exist; authenticated devices see the
    /// original's statuses and messages in the original's order.
    func respond(challengeId rawId: String, body: JSONObject?, device: DeviceAuthenticator.Device) async throws(PushMFAError) -> String {
        guard let body else { throw PushMFAError.badRequest("Request body required") }
        let challengeId = try PushMFAInput.uuid(rawId, "cid")
        let now = clock.now()
        guard let challenge = try await stored({ try await challenges.challenge(id: challengeId, now: now) }),
            challenge.realm == device.credential.realm
        else { throw PushMFAError.notFound("Challenge not found") }
        guard challenge.kind == .authentication else { throw PushMFAError.badRequest("Challenge is not for login") }
        guard challenge.status == .pending else { throw PushMFAError.badRequest("Challenge already resolved or expired") }
        guard challenge.userId == device.user.id else { throw PushMFAError.forbidden("Authentication token subject mismatch") }
        if let bound = challenge.credentialId, bound != device.credential.id {
            throw PushMFAError.forbidden("Authentication token device mismatch")
        }

        let compact = try PushMFAInput.required(body, "token", maxLength: PushMFALimits.jwtLength)
        let token = try DeviceJWT(compact, name: "authentication token")
        let (claims, algorithm) = (token.claims, token.algorithm)
        let action = (claims["action"]?.stringValue ?? "approve").lowercased()
        guard let tokenChallenge = claims["cid"]?.stringValue, (try? PushMFAInput.uuid(tokenChallenge, "cid")) == challenge.id else {
            throw PushMFAError.forbidden("Challenge mismatch")
        }
        guard device.key.fits(algorithm) else {
            throw PushMFAError.badRequest("JWK algorithm mismatch")
        }
        try await verifyLoginToken(compact, key: device.key, challenge: challenge, now: now)
        guard let credId = claims["credId"]?.stringValue else { throw PushMFAError.missingField("credId") }
        guard credId == device.credential.credentialId else { throw PushMFAError.forbidden("Authentication token credential mismatch") }

        switch action {
        case "deny":
            return try await finish(challenge, to: .denied, now: now)
        case "approve":
            let settings = try await stored { try await self.settings(realm: challenge.realm) }
            guard let approving = try await stored({ try await approvingDevice(realm: challenge.realm, device.credential, settings: settings) }) else {
                await invalidResponse(challenge, reason: "device may not approve (removed, or not attested at \(settings.requireAttestedDevice.rawValue))")
                throw PushMFAError.forbidden("This device may not approve sign-ins in this realm")
            }
            if challenge.userVerification != .none {
                guard let value = claims["userVerification"], !(value.stringValue?.trimmingCharacters(in: .whitespaces).isEmpty ?? false) else {
                    throw PushMFAError.badRequest("Missing user verification")
                }
                guard let answer = value.stringValue else { throw PushMFAError.badRequest("Invalid user verification value") }
                guard challenge.userVerification.accepts(answer) else {
                    try await wrongAnswer(challenge, now: now)
                    throw PushMFAError.forbidden("User verification mismatch")
                }
            }
            return try await finish(challenge, to: .approved, now: now, approvedBy: approving)
        default:
            throw PushMFAError.badRequest("Unsupported action: \(action.prefix(32))")
        }
    }

    /// The login token's signature and `exp`, through `JWTVerifier` like every other JWT. The policy keeps the
    /// original's rules: `exp` optional and checked exactly, the stored key used whatever `kid` the token names,
    /// no `typ` required; `iat` / `nbf`, which the original ignores, get the device-proof tolerance.
    private func verifyLoginToken(_ compact: String, key: JWK, challenge: PushChallenge, now: Date) async throws(PushMFAError) {
        var storedKey = key
        storedKey.kid = nil
        let policy = JWTVerificationPolicy(
            allowedAlgorithms: DeviceAuthenticator.algorithms, keys: .single(storedKey), requiredClaims: [],
            leeway: 120, expiryLeeway: 0, maxSize: PushMFALimits.jwtLength
        )
        do {
            _ = try JWTVerifier.verify(compact, policy: policy, now: now)
        } catch where error.code == .badSignature {
            await invalidResponse(challenge, reason: "Invalid authentication token signature")
            throw PushMFAError.forbidden("Invalid authentication token signature")
        } catch where error.code == .expired || error.code == .invalidClaim {
            throw PushMFAError.badRequest("authentication token expired")
        } catch {
            throw PushMFAError.badRequest("Invalid authentication token")
        }
    }

    /// One atomic transition. The loser of two racing responses gets 409, as the original's resolve lock does.
    /// `approvedBy`: the device that approved, named in the audit with its attestation level.
    private func finish(
        _ challenge: PushChallenge, to status: PushChallenge.Status, now: Date, approvedBy: ApprovingDevice? = nil
    ) async throws(PushMFAError) -> String {
        switch try await stored({ try await challenges.resolve(id: challenge.id, to: status, now: now) }) {
        case .applied(let resolved):
            signals.notify(resolved)
            if status == .approved {
                var details = ["challengeId": resolved.id]
                if let approvedBy {
                    details["device"] = approvedBy.description
                    details["level"] = approvedBy.level.rawValue
                    if let registered = approvedBy.device { details["registeredDevice"] = registered.deviceId }
                }
                await audit.record(.challengeAccepted, realm: resolved.realm, userId: resolved.userId, clientId: resolved.clientId, details: details)
                return "approved"
            }
            await audit.record(.challengeDenied, realm: resolved.realm, userId: resolved.userId, clientId: resolved.clientId, details: ["challengeId": resolved.id, "reason": "denied on the device"])
            return "denied"
        case .alreadyFinal(let current) where current.status == .expired:
            throw PushMFAError.badRequest("Challenge already resolved or expired")
        case .alreadyFinal:
            throw PushMFAError.conflict("Challenge is currently being resolved")
        case .notFound:
            throw PushMFAError.notFound("Challenge not found")
        }
    }

    /// Keyward's attempt limit: a wrong number denies at once, the third wrong PIN denies.
    private func wrongAnswer(_ challenge: PushChallenge, now: Date) async throws(PushMFAError) {
        await invalidResponse(challenge, reason: "User verification mismatch")
        let limit = challenge.userVerification.allowedWrongAnswers
        let updated = try await stored {
            try await challenges.recordVerificationFailure(id: challenge.id, limit: limit, now: now)
        }
        if let updated, updated.status == .denied {
            signals.notify(updated.id)
            await audit.record(
                .challengeDenied, realm: updated.realm, userId: updated.userId, clientId: updated.clientId,
                details: ["challengeId": updated.id, "reason": limit == 1 ? "wrong user-verification answer" : "\(limit) wrong user-verification answers"]
            )
        }
    }

    private func invalidResponse(_ challenge: PushChallenge, reason: String) async {
        await audit.record(.challengeResponseInvalid, realm: challenge.realm, userId: challenge.userId, clientId: challenge.clientId, details: ["challengeId": challenge.id, "reason": reason])
    }
}
