// Starting a login challenge and pushing it to the user's devices, and cancelling or discarding one.
import Foundation
import KeywardJOSE

/// What the browser's push step gets when it asks for a login challenge.
public enum LoginChallengeStart: Sendable {
    /// Created and pushed. The watch secret opens the SSE stream; only the waiting page has it.
    case created(PushChallenge, watchSecret: String, sameDeviceLink: String, confirmToken: String)
    /// The user has no push device.
    case noDevice
    /// The user has push devices, and none may approve (`approvingDevices`): the realm requires devices attested at
    /// `required`.
    case noApprovingDevice(required: DeviceAttestationLevel)
    /// `maxPendingChallenges` other logins are waiting for an answer already.
    case tooManyPending
    /// Wait-challenge rate limiting: try again after this many seconds.
    case waitRequired(seconds: Int)
}

extension PushMFAService {
    /// Issues a login challenge for `user` and pushes it to their device(s) (docs/PUSH-MFA-PROTOCOL.md §6.1).
    /// A new challenge from the same browser session replaces that session's pending one (resend). `languages`
    /// (the browser's Accept-Language, most preferred first) picks the notification text.
    public func startLogin(
        realm: Realm, user: User, clientId: String?, sessionId: String, languages: [String] = []
    ) async throws(PushMFAError) -> LoginChallengeStart {
        let (realmSettings, enrolled) = try await stored { try await credentials.settingsAndCredentials(realm: realm.name, userId: user.id) }
        let settings = realmSettings ?? PushMFASettings()
        let devices = try await stored { try await approvingDevices(realm: realm.name, enrolled, settings: settings) }.map(\.credential)
        guard let newest = devices.max(by: { $0.createdAt < $1.createdAt }) else {
            return enrolled.isEmpty ? .noDevice : .noApprovingDevice(required: settings.requireAttestedDevice)
        }
        let now = clock.now()

        let limiter = WaitChallengeLimiter(settings: settings)
        let waitState = settings.waitChallengeEnabled ? try await stored { try await state.waitState(realm: realm.name, userId: user.id) } : nil
        if let seconds = limiter.remainingWait(waitState, now: now) { return .waitRequired(seconds: seconds) }

        let targets = settings.loginDevices == .all ? devices : [newest]
        let watchSecret = PushMFATokens.secret()
        let challenge = PushChallenge(
            id: SecureRandom.uuidString(), realm: realm.name, userId: user.id, kind: .authentication,
            credentialId: settings.loginDevices == .all ? nil : newest.id, clientId: clientId, sessionId: sessionId,
            watchSecretHash: PushMFATokens.secretHash(watchSecret),
            userVerification: .generate(mode: settings.userVerification, pinLength: settings.userVerificationPinLength),
            createdAt: now, expiresAt: now.addingTimeInterval(TimeInterval(settings.loginChallengeTtlSeconds))
        )
        guard let replaced = try await stored({
            try await challenges.createLoginChallenge(challenge, maxPending: settings.effectiveMaxPendingChallenges, now: now)
        }) else { return .tooManyPending }
        for id in replaced { signals.notify(id) }
        if settings.waitChallengeEnabled {
            try await stored { try await state.saveWaitState(limiter.recordingChallenge(waitState, now: now), realm: realm.name, userId: user.id) }
        }
        await audit.record(.challengeCreated, realm: realm.name, userId: user.id, clientId: clientId, details: ["challengeId": challenge.id, "type": "AUTHENTICATION"])

        let text = settings.notificationText(for: languages)
        var firstToken = ""
        var newestToken = ""
        for device in targets {
            let token = try await stored { try await tokens.confirmToken(realm: realm.name, credential: device, challenge: challenge, now: now) }
            if firstToken.isEmpty { firstToken = token }
            if device.id == newest.id { newestToken = token }
            await sendPush(realm: realm, user: user, credential: device, challenge: challenge, confirmToken: token, text: text)
        }
        let sameDeviceLink = try await sameDeviceLink(challenge: challenge, device: newest, pushedToken: newestToken, settings: settings, now: now)
        return .created(challenge, watchSecret: watchSecret, sameDeviceLink: sameDeviceLink, confirmToken: firstToken)
    }

    /// Hands the push to the sender without holding up the login page; a gone device token is remembered. When
    /// the push provider is so slow that `pushTasks` is full, the push is dropped: the login still goes on, and
    /// the phone finds the challenge when it next asks (`login/pending`).
    private func sendPush(
        realm: Realm, user: User, credential: PushCredential, challenge: PushChallenge, confirmToken: String, text: (title: String?, body: String?)
    ) async {
        let pusher = self.pusher
        let credentials = self.credentials
        let accepted = pushTasks.submit {
            let unregistered = await pusher.push(
                realm: realm, user: user, credential: credential, challenge: challenge, confirmToken: confirmToken,
                title: text.title, body: text.body
            )
            if unregistered { try? await credentials.markPushTokenInvalid(realm: realm.name, id: credential.id) }
        }
        if !accepted {
            logger.warning("push dropped: too many pushes in flight", metadata: [
                "realm": "\(realm.name)", "challengeId": "\(challenge.id)", "credentialId": "\(credential.credentialId)",
                "maxRunning": "\(pushTasks.maxRunning)", "maxWaiting": "\(pushTasks.maxWaiting)",
            ])
        }
    }

    /// The browser's Cancel: resolves the challenge DENIED if it is still pending and belongs to `sessionId`.
    /// Not counted as a failed login.
    public func cancelLogin(challengeId: String, sessionId: String) async throws(PushMFAError) {
        let now = clock.now()
        guard let challenge = try await stored({ try await challenges.challenge(id: challengeId, now: now) }),
            challenge.kind == .authentication, challenge.sessionId == sessionId
        else { return }
        if case .applied = try await stored({ try await challenges.resolve(id: challengeId, to: .denied, now: now) }) {
            signals.notify(challengeId)
            await audit.record(.challengeDenied, realm: challenge.realm, userId: challenge.userId, clientId: challenge.clientId, details: ["challengeId": challengeId, "reason": "cancelled in the browser"])
        }
    }

    /// Forgets a finished challenge once the browser has acted on its outcome.
    public func discardChallenge(id: String) async {
        try? await challenges.deleteChallenge(id: id)
    }
}
