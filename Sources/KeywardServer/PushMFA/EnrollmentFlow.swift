// Enrolling a phone: starting enrollment, the link and token it scans, completing with the device's JWT.
import Foundation
import KeywardHTTPInput
import KeywardJOSE

/// A started enrollment, as the enrollment page (or `keyward enrollment-link`) shows it.
public struct EnrollmentStart: Sendable {
    public let challenge: PushChallenge
    /// Opens `/enroll/challenges/{id}/events`; only the page that started the enrollment has it.
    public let watchSecret: String
    public let enrollmentToken: String
    /// What the QR code encodes: `{enrollmentAppUniversalLink}?token=…` or `?request_uri=…`.
    public let link: String
    public let requestURI: String?
}

extension PushMFAService {
    /// Creates an enrollment challenge for `user` and the link the phone scans (docs/PUSH-MFA-PROTOCOL.md §6.2, §4.1).
    public func startEnrollment(realm: String, user: User) async throws(PushMFAError) -> EnrollmentStart {
        let settings = try await stored { try await self.settings(realm: realm) }
        let now = clock.now()
        let watchSecret = PushMFATokens.secret()
        let challenge = PushChallenge(
            id: SecureRandom.uuidString(), realm: realm, userId: user.id, kind: .enrollment,
            nonce: PushMFATokens.enrollmentNonce(), watchSecretHash: PushMFATokens.secretHash(watchSecret),
            createdAt: now, expiresAt: now.addingTimeInterval(TimeInterval(settings.enrollmentChallengeTtlSeconds))
        )
        try await stored { try await challenges.insertChallenge(challenge) }
        await audit.record(.challengeCreated, realm: realm, userId: user.id, details: ["challengeId": challenge.id, "type": "ENROLLMENT"])
        let token = try await stored { try await tokens.enrollmentToken(realm: realm, user: user, challenge: challenge, now: now) }
        let requestURI = settings.enrollmentUseRequestUri ? try await requestURI(for: challenge, settings: settings, now: now) : nil
        let link = requestURI.map { Self.appLink(settings.enrollmentAppUniversalLink, parameter: "request_uri", value: $0) }
            ?? Self.appLink(settings.enrollmentAppUniversalLink, parameter: "token", value: token)
        return EnrollmentStart(challenge: challenge, watchSecret: watchSecret, enrollmentToken: token, link: link, requestURI: requestURI)
    }

    /// The `request_uri` of a pending enrollment: its live handle when it has one, so a reloaded page shows the
    /// same link (and QR code) again; otherwise a new handle, living `enrollmentRequestUriTtlSeconds` at most
    /// and never past the challenge.
    private func requestURI(for challenge: PushChallenge, settings: PushMFASettings, now: Date) async throws(PushMFAError) -> String {
        let base = realms.issuer(of: challenge.realm) + "/push-mfa/enroll/request-token/"
        if let live = try await stored({ try await challenges.enrollmentRequest(challengeId: challenge.id, now: now) }) {
            return base + live.handle
        }
        let handle = SecureRandom.uuidString()
        let lifetime = settings.enrollmentRequestUriTtlSeconds.map(TimeInterval.init) ?? challenge.expiresAt.timeIntervalSince(now)
        let expiresAt = min(now.addingTimeInterval(max(lifetime, 1)), challenge.expiresAt)
        try await stored {
            try await challenges.insertEnrollmentRequest(
                EnrollmentRequest(handle: handle, realm: challenge.realm, userId: challenge.userId, challengeId: challenge.id, expiresAt: expiresAt)
            )
        }
        return base + handle
    }

    /// `prefix?name=value` with the value percent-encoded; a blank prefix yields the raw value (docs/PUSH-MFA-PROTOCOL.md §4.1).
    static func appLink(_ prefix: String, parameter: String, value: String) -> String {
        guard !prefix.trimmingCharacters(in: .whitespaces).isEmpty else { return value }
        return prefix + (prefix.contains("?") ? "&" : "?") + parameter + "=" + value.percentEncodedUnreserved
    }

    /// Endpoint 1: a freshly signed enrollment token for a reusable, time-limited request handle (docs/PUSH-MFA-PROTOCOL.md §3.3).
    public func enrollmentToken(realm: Realm, handle rawHandle: String) async throws(PushMFAError) -> String {
        let handle = try PushMFAInput.uuid(rawHandle, "requestHandle")
        let now = clock.now()
        let notFound = PushMFAError.notFound("Enrollment request not found")
        guard let request = try await stored({ try await challenges.enrollmentRequest(handle: handle, now: now) }),
            request.realm == realm.name
        else { throw notFound }
        let challenge = try await stored { try await challenges.challenge(id: request.challengeId, now: now) }
        let user = try await stored { try await users.user(realm: realm.name, id: request.userId) }
        guard let challenge, challenge.kind == .enrollment, challenge.status == .pending, challenge.userId == request.userId, let user else {
            try? await challenges.deleteEnrollmentRequest(handle: handle)
            throw notFound
        }
        return try await stored { try await tokens.enrollmentToken(realm: realm.name, user: user, challenge: challenge, now: now) }
    }

    /// Endpoint 2: the device's signed enrollment JWT, checked in the original's order (docs/PUSH-MFA-PROTOCOL.md §3.4).
    func completeEnrollment(body: JSONObject?, request: DeviceAuthenticator.Request) async throws(PushMFAError) {
        let realm = request.realm
        guard let body else { throw PushMFAError.badRequest("Request body required") }
        let compact = try PushMFAInput.required(body, "token", maxLength: PushMFALimits.jwtLength)
        let token = try DeviceJWT(compact, name: "enrollment token")
        let (jws, claims, algorithm) = (token.jws, token.claims, token.algorithm)
        let subject = try PushMFAInput.required(claims, "sub", maxLength: PushMFALimits.userIdLength)
        guard let user = try await stored({ try await users.user(realm: realm.name, id: subject) }) else {
            throw PushMFAError.notFound("User not found")
        }
        let enrollmentId = try PushMFAInput.uuid(try PushMFAInput.required(claims, "enrollmentId", maxLength: 36), "enrollmentId")
        let now = clock.now()
        guard let challenge = try await stored({ try await challenges.challenge(id: enrollmentId, now: now) }), challenge.realm == realm.name else {
            throw PushMFAError.notFound("Challenge not found")
        }
        guard challenge.kind == .enrollment else { throw PushMFAError.badRequest("Challenge is not for enrollment") }
        guard challenge.userId == user.id else { throw PushMFAError.forbidden("Challenge does not belong to user") }
        guard challenge.status == .pending else { throw PushMFAError.badRequest("Challenge already resolved or expired") }
        if let exp = claims["exp"] {
            guard let seconds = exp.numberValue else { throw PushMFAError.badRequest("enrollment token expired") }
            guard now.timeIntervalSince1970 <= seconds else { throw PushMFAError.badRequest("enrollment token expired") }
        }
        let nonce = try PushMFAInput.required(claims, "nonce", maxLength: PushMFALimits.nonceLength)
        guard ConstantTime.equal(nonce, challenge.nonce) else { throw PushMFAError.forbidden("Nonce mismatch") }
        let key = try DeviceKeyInput.enrollmentKey(claims, algorithm: algorithm)

        let deviceType = try PushMFAInput.required(claims, "deviceType", maxLength: PushMFALimits.deviceTypeLength)
        let pushProviderType = try PushMFAInput.optional(claims, "pushProviderType", maxLength: PushMFALimits.pushProviderTypeLength) ?? "none"
        let pushProviderId = try PushMFAInput.optional(claims, "pushProviderId", maxLength: PushMFALimits.pushProviderIdLength)
        guard pushProviderId != nil || pushProviderType == "none" else {
            throw PushMFAError.badRequest("pushProviderId required unless pushProviderType=none")
        }
        let credentialId = try PushMFAInput.required(claims, "credentialId", maxLength: PushMFALimits.credentialIdLength)
        let deviceId = try PushMFAInput.required(claims, "deviceId", maxLength: PushMFALimits.deviceIdLength)

        let settings = try await stored { try await self.settings(realm: realm.name) }
        let enrolled = try await stored { try await credentials.credentials(realm: realm.name, userId: user.id) }
        // A device id already enrolled is replaced, so only a new one counts against the cap. Read, then written
        // by completeEnrollment: two enrollments finishing at the same instant can pass it together, but each
        // needs an enrollment started from the user's own signed-in browser.
        guard enrolled.contains(where: { $0.deviceId == deviceId }) || enrolled.count < settings.maxDevicesPerUser else {
            throw PushMFAError.conflict("Too many devices: at most \(settings.maxDevicesPerUser) per user; remove one first")
        }
        if settings.requireDpopForEnrollment || !request.dpopProofs.isEmpty {
            try await authenticator.authenticateEnrollment(request, enrollingKey: key, subject: user.id, deviceId: deviceId)
        } else if !request.authorization.isEmpty {
            try await authenticator.authenticateEnrollmentToken(request)
        }
        guard key.verify(signature: jws.signature, over: jws.signingInput, algorithm: algorithm) else {
            await audit.record(.challengeResponseInvalid, realm: realm.name, userId: user.id, details: ["challengeId": challenge.id, "reason": "Invalid enrollment token signature"])
            throw PushMFAError.forbidden("Invalid enrollment token signature")
        }
        let label = try PushMFAInput.optional(claims, "deviceLabel", maxLength: PushMFALimits.deviceLabelLength) ?? "Push MFA Device"

        let credential = PushCredential(
            id: SecureRandom.uuidString(), realm: realm.name, userId: user.id, credentialId: credentialId, deviceId: deviceId,
            deviceType: deviceType, deviceLabel: label, publicKeyJWK: String(decoding: StrictJSON.serialize(key.jsonObject), as: UTF8.self),
            pushProviderId: pushProviderId ?? "", pushProviderType: pushProviderType, createdAt: now
        )
        switch try await stored({ try await credentials.completeEnrollment(challengeId: challenge.id, credential: credential, now: now) }) {
        case .applied:
            signals.notify(challenge.id)
            await audit.record(
                .enrollmentCompleted, realm: realm.name, userId: user.id,
                details: ["challengeId": challenge.id, "credentialId": credentialId, "deviceId": deviceId, "deviceType": deviceType]
            )
        case .alreadyFinal, .notFound:
            throw PushMFAError.badRequest("Challenge already resolved or expired")
        }
    }
}

extension PushMFAService {
    /// The link for an enrollment that is still pending (a reloaded page), in the form the realm asks for: the
    /// same `request_uri`, or a freshly signed token for the same challenge.
    public func enrollmentLink(for challenge: PushChallenge, user: User) async throws(PushMFAError) -> String {
        let settings = try await stored { try await self.settings(realm: challenge.realm) }
        let now = clock.now()
        if settings.enrollmentUseRequestUri {
            return Self.appLink(settings.enrollmentAppUniversalLink, parameter: "request_uri", value: try await requestURI(for: challenge, settings: settings, now: now))
        }
        let token = try await stored { try await tokens.enrollmentToken(realm: challenge.realm, user: user, challenge: challenge, now: now) }
        return Self.appLink(settings.enrollmentAppUniversalLink, parameter: "token", value: token)
    }
}
