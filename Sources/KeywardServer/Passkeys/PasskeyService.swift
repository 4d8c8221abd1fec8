// Passkey ceremonies: options with sealed challenges, registration and sign-in verified by KeywardAttestation's
// WebAuthn checks, the counter kept, each challenge spent once.
import Foundation
import KeywardAttestation
import KeywardJOSE
import KeywardWire

/// The passkey ceremonies of a realm, free of HTTP: what the options say, what a response must prove, what is
/// stored. The browser binding (`binding`) is the hash of what the browser holds (its session, or its pre-login
/// state) so a challenge issued to one browser is refused from another.
struct PasskeyService: Sendable {
    let store: any PasskeyStore
    let settings: PasskeySettingsStore
    let users: UserService
    let realms: RealmService
    let singleUse: any SingleUseStore
    let sealer: SealedJSON
    let audit: AuditLog
    let clock: any KeywardClock
    let publicURL: String
    /// The realm's apps (`keyward apps`): an Android app's own origin is accepted without naming it again.
    let apps: DeviceAppService
    private let appOrigins = ShortLivedCache<String, [String]>(lifetime: 5, capacity: 1000)

    /// ES256 first (every authenticator has it), then EdDSA and RS256 (Windows Hello).
    static let algorithms = [-7, -8, -257]
    /// A minute less than the challenge lives: an answer sent as the browser gives up still arrives in time.
    static let timeoutMillis = Int((PasskeyChallenge.lifetime - 60) * 1000)
    /// A passkey's name on the account page.
    static let maximumNameLength = 64
    /// More passkeys than anyone keeps; a bound on what one account can store.
    static let maximumPerUser = 30

    /// The realm's settings, when passkeys are on.
    func enabledSettings(realm: String) async throws -> PasskeySettings {
        let current = try await settings.settings(realm: realm)
        guard current.mode != .off else { throw PasskeysDisabled(realm: realm) }
        return current
    }

    /// The realm's relying party: its RP ID, and the origins `publicURL`'s, the settings' and its Android apps'
    /// (`android:apk-key-hash:` and the SHA-256 of each signing certificate, as Android's passkey API writes them).
    private func relyingParty(realm: String, _ settings: PasskeySettings) async throws -> WebAuthnRelyingParty {
        WebAuthnRelyingParty(
            rpID: settings.effectiveRPID(publicURL: publicURL), origins: settings.origins(publicURL: publicURL).union(try await androidOrigins(realm: realm))
        )
    }

    func androidOrigins(realm: String) async throws -> [String] {
        let now = clock.now()
        if let cached = appOrigins.value(for: realm, now: now) { return cached }
        let origins = try await apps.list(realm: realm).filter { $0.platform == .android }.flatMap(\.signingCertDigests).compactMap { hex -> String? in
            guard let digest = HexDigit.bytes(hex), digest.count == 32 else { return nil }
            return "android:apk-key-hash:" + Base64URL.encode(digest)
        }
        appOrigins.store(origins, for: realm, now: now)
        return origins
    }

    /// The user handle of `userId`: its UTF-8 bytes (a random UUID, no personal data), base64url.
    static func userHandle(_ userId: String) -> String { Base64URL.encode(Array(userId.utf8)) }

    // MARK: Registration

    func registrationOptions(realm: String, user: User, binding: String) async throws -> PublicKeyCredentialCreationOptionsJSON {
        let settings = try await enabledSettings(realm: realm)
        let existing = try await store.passkeys(realm: realm, userId: user.id)
        guard existing.count < Self.maximumPerUser else {
            throw PasskeyRefusal(PasskeyRefusal.tooMany, "an account holds at most \(Self.maximumPerUser) passkeys; remove one first")
        }
        let challenge = PasskeyChallenge(ceremony: .registration, binding: binding, userId: user.id, now: clock.now())
        let displayName = try await realms.realm(named: realm)?.displayName ?? realm
        return PublicKeyCredentialCreationOptionsJSON(
            rp: .init(id: settings.effectiveRPID(publicURL: publicURL), name: displayName),
            user: .init(id: Self.userHandle(user.id), name: user.username, displayName: user.username),
            challenge: challenge.sealed(with: sealer, realm: realm),
            pubKeyCredParams: Self.algorithms.map { PublicKeyCredentialParametersJSON(alg: $0) }, timeout: Self.timeoutMillis,
            excludeCredentials: existing.map { PublicKeyCredentialDescriptorJSON(id: $0.credentialId, transports: $0.transports.isEmpty ? nil : $0.transports) },
            authenticatorSelection: .init(residentKey: "required", userVerification: settings.userVerification.rawValue),
            attestation: settings.attestation.rawValue
        )
    }

    func register(realm: String, user: User, binding: String, response: RegistrationResponseJSON, name: String?) async throws -> Passkey {
        let settings = try await enabledSettings(realm: realm)
        let now = clock.now()
        let (clientData, challenge) = try openChallenge(response.response.clientDataJSON, realm: realm, ceremony: .registration, binding: binding, now: now)
        guard challenge.userId == user.id else { throw PasskeyRefusal(PasskeyRefusal.challengeOfAnotherBrowser, "the challenge was issued to another account") }
        guard response.id == response.rawId, response.type == "public-key" else {
            throw PasskeyRefusal(PasskeyRefusal.idMismatch, "id and rawId must be the same credential id, and type public-key")
        }
        let attestationObject = try Self.bytes(response.response.attestationObject, "response.attestationObject")
        let expected = try Self.bytes(challenge.sealedText, "challenge")
        let party = try await relyingParty(realm: realm, settings)
        let registration: WebAuthnRelyingParty.Registration
        do throws(WebAuthnFailure) {
            registration = try await party.verifyRegistration(
                clientDataJSON: clientData, attestationObject: attestationObject, challenge: expected,
                requireUserVerification: settings.userVerification == .required, attestation: settings.attestationPolicy, at: now
            )
        } catch {
            throw PasskeyRefusal(error.reason.rawValue, error.detail)
        }
        guard Base64URL.encode(registration.credentialID) == response.id else {
            throw PasskeyRefusal(PasskeyRefusal.idMismatch, "the credential id is not the one the authenticator data registers")
        }
        try await spend(challenge, realm: realm, now: now)
        let passkey = Passkey(
            realm: realm, credentialId: response.id, userId: user.id, publicKey: Base64URL.encode(registration.publicKeyBytes),
            algorithm: Int(registration.key.algorithm.rawValue), signCount: registration.signCount, backupEligible: registration.backupEligible,
            backedUp: registration.backedUp, userVerified: registration.userVerified,
            transports: Self.transports(response.response.transports), aaguid: Self.uuid(registration.aaguid),
            attestationFormat: registration.attestation.format, attestationTrusted: registration.attestation.trusted,
            name: Self.cleanName(name) ?? "Passkey added \(now.formatted(.iso8601.year().month().day()))", createdAt: now, lastUsedAt: nil,
            possiblyClonedAt: nil
        )
        guard try await store.insert(passkey) else {
            throw PasskeyRefusal(PasskeyRefusal.credentialExists, "this credential is registered already")
        }
        await audit.record(.passkeyRegistered, realm: realm, userId: user.id, details: [
            "credential": String(passkey.credentialId.prefix(16)), "attestation": passkey.attestationFormat, "synced": String(passkey.backupEligible),
        ])
        return passkey
    }

    // MARK: Sign-in

    /// Options for a sign-in. The second step names the user's passkeys (the session already knows who it is). A
    /// sign-in names none, with or without a username, so the answer is the same whoever is named and tells nobody
    /// which accounts exist or hold passkeys; the browser offers its discoverable passkeys (every passkey is made
    /// discoverable), and a username binds the challenge to that account (`-` for none), whose passkey alone then
    /// signs in.
    func authenticationOptions(realm: String, binding: String, ceremony: PasskeyChallenge.Ceremony, userId: String?, username: String?) async throws -> PublicKeyCredentialRequestOptionsJSON {
        let settings = try await enabledSettings(realm: realm)
        var allowed: [PublicKeyCredentialDescriptorJSON] = []
        var boundUser = userId
        if let userId {
            allowed = try await store.passkeys(realm: realm, userId: userId).map(Self.descriptor)
        } else if let username, !username.isEmpty {
            let user = try await users.user(realm: realm, username: username)
            boundUser = user?.id ?? "-"
        }
        let challenge = PasskeyChallenge(ceremony: ceremony, binding: binding, userId: boundUser, now: clock.now())
        return PublicKeyCredentialRequestOptionsJSON(
            challenge: challenge.sealed(with: sealer, realm: realm), timeout: Self.timeoutMillis, rpId: settings.effectiveRPID(publicURL: publicURL),
            allowCredentials: allowed, userVerification: Self.userVerification(ceremony, settings).rawValue
        )
    }

    /// A passkey sign-in that checked out.
    struct SignIn: Sendable {
        let user: User
        let passkey: Passkey
        let userVerified: Bool
        /// The realm asks for its second factor after a passkey too (`PasskeySettings.secondStep`).
        let secondStepAsked: Bool

        /// The passkey as the first factor of a sign-in.
        var firstFactor: FirstFactor { .passkey(userVerified: userVerified, secondStepAsked: secondStepAsked) }
    }

    func authenticate(realm: String, binding: String, ceremony: PasskeyChallenge.Ceremony, response: AuthenticationResponseJSON) async throws -> SignIn {
        let settings = try await enabledSettings(realm: realm)
        let now = clock.now()
        let (clientData, challenge) = try openChallenge(response.response.clientDataJSON, realm: realm, ceremony: ceremony, binding: binding, now: now)
        guard ceremony != .secondFactor || challenge.userId != nil else {
            throw PasskeyRefusal(PasskeyRefusal.challengeInvalid, "a second step's challenge names its account")
        }
        guard response.id == response.rawId, response.type == "public-key" else {
            throw PasskeyRefusal(PasskeyRefusal.idMismatch, "id and rawId must be the same credential id, and type public-key")
        }
        guard response.id.utf8.count <= 1400, let passkey = try await store.passkey(realm: realm, credentialId: response.id) else {
            throw PasskeyRefusal(PasskeyRefusal.unknownCredential, "no passkey with this credential id is registered in realm '\(realm)'")
        }
        if let expected = challenge.userId, expected != passkey.userId {
            throw PasskeyRefusal(PasskeyRefusal.userHandleMismatch, "the passkey belongs to another account than the one signing in")
        }
        if let handle = response.response.userHandle {
            guard handle == Self.userHandle(passkey.userId) else {
                throw PasskeyRefusal(PasskeyRefusal.userHandleMismatch, "userHandle names another account than the passkey's")
            }
        } else if challenge.userId == nil {
            throw PasskeyRefusal(PasskeyRefusal.userHandleMismatch, "a sign-in without a username needs the passkey's userHandle")
        }
        guard passkey.possiblyClonedAt == nil else {
            throw PasskeyRefusal(PasskeyRefusal.credentialSuspended, "this passkey was seen with a counter that went back; remove it and add it again")
        }
        guard let user = try await users.user(realm: realm, id: passkey.userId) else {
            throw PasskeyRefusal(PasskeyRefusal.unknownCredential, "the passkey's account is gone")
        }
        guard user.enabled else { throw PasskeyRefusal(PasskeyRefusal.userDisabled, "this account is disabled") }
        let stored = WebAuthnRelyingParty.StoredCredential(
            key: try Self.key(passkey), signCount: passkey.signCount, backupEligible: passkey.backupEligible
        )
        let authenticatorData = try Self.bytes(response.response.authenticatorData, "response.authenticatorData")
        let signature = try Self.bytes(response.response.signature, "response.signature")
        let expected = try Self.bytes(challenge.sealedText, "challenge")
        let party = try await relyingParty(realm: realm, settings)
        let assertion: WebAuthnRelyingParty.Assertion
        do throws(WebAuthnFailure) {
            assertion = try party.verifyAssertion(
                clientDataJSON: clientData, authenticatorData: authenticatorData, signature: signature, challenge: expected, credential: stored,
                requireUserVerification: Self.userVerification(ceremony, settings) == .required
            )
        } catch {
            // The counter is judged after the signature verified. A replayed answer also repeats its counter: its
            // challenge is spent already, and it is refused as that without marking anything.
            if error.reason == .counterNotIncreasing {
                try await spend(challenge, realm: realm, now: now)
                let suspended = try await suspendsOnCounter(passkey, user: user)
                if suspended { try await store.markPossiblyCloned(realm: realm, credentialId: passkey.credentialId, at: now) }
                await audit.record(.passkeyPossiblyCloned, realm: realm, userId: passkey.userId, details: [
                    "credential": String(passkey.credentialId.prefix(16)), "stored": String(passkey.signCount), "suspended": String(suspended),
                ])
            }
            throw PasskeyRefusal(error.reason.rawValue, error.detail)
        }
        try await spend(challenge, realm: realm, now: now)
        guard try await store.recordUse(
            realm: realm, credentialId: passkey.credentialId, expectedSignCount: passkey.signCount, signCount: assertion.signCount,
            backedUp: assertion.backedUp, userVerified: assertion.userVerified, at: now
        ) else {
            throw PasskeyRefusal(PasskeyRefusal.raced, "another sign-in with this passkey moved its counter first; try again")
        }
        var used = passkey
        (used.signCount, used.backedUp, used.userVerified, used.lastUsedAt) = (assertion.signCount, assertion.backedUp, assertion.userVerified, now)
        return SignIn(user: user, passkey: used, userVerified: assertion.userVerified, secondStepAsked: settings.secondStep)
    }

    /// Whether a counter that went back suspends `passkey`. Only a device-bound one: a synced passkey's devices may
    /// each keep a count, and answers from two tabs can arrive out of order. And never the account's last way in: a
    /// refusal (audited) costs the person one sign-in, a suspension their account.
    private func suspendsOnCounter(_ passkey: Passkey, user: User) async throws -> Bool {
        guard !passkey.backupEligible else { return false }
        let others = try await store.passkeys(realm: passkey.realm, userId: user.id)
            .filter { $0.credentialId != passkey.credentialId && $0.possiblyClonedAt == nil }.count
        if others > 0 { return true }
        return try await users.waysIn(realm: passkey.realm, user: user) > 0
    }

    /// A first factor always verifies the person (a passkey alone then stands for two factors); a second step asks
    /// what the realm says.
    static func userVerification(_ ceremony: PasskeyChallenge.Ceremony, _ settings: PasskeySettings) -> PasskeySettings.UserVerification {
        ceremony == .signIn ? .required : settings.userVerification
    }

    // MARK: The account's passkeys

    func passkeys(realm: String, userId: String) async throws -> [Passkey] {
        try await store.passkeys(realm: realm, userId: userId)
    }

    func rename(realm: String, userId: String, credentialId: String, name: String) async throws -> Bool {
        guard let name = Self.cleanName(name) else { return false }
        let renamed = try await store.rename(realm: realm, userId: userId, credentialId: credentialId, name: name)
        if renamed { await audit.record(.passkeyRenamed, realm: realm, userId: userId, details: ["credential": String(credentialId.prefix(16))]) }
        return renamed
    }

    enum Removal: Sendable, Equatable {
        case removed, lastWayIn, notFound
    }

    /// Removes one of the user's passkeys, unless it is their last way in (no password, no working provider
    /// identity, no other usable passkey).
    func removeUnlessLastWayIn(realm: String, userId: String, credentialId: String) async throws -> Removal {
        let passkeys = try await store.passkeys(realm: realm, userId: userId)
        guard let target = passkeys.first(where: { $0.credentialId == credentialId }) else { return .notFound }
        let others = passkeys.filter { $0.credentialId != credentialId && $0.possiblyClonedAt == nil }.count
        if others == 0, target.possiblyClonedAt == nil, let user = try await users.user(realm: realm, id: userId),
            try await users.waysIn(realm: realm, user: user) == 0
        {
            return .lastWayIn
        }
        guard try await store.delete(realm: realm, userId: userId, credentialId: credentialId) else { return .notFound }
        await audit.record(.passkeyRemoved, realm: realm, userId: userId, details: ["credential": String(credentialId.prefix(16))])
        return .removed
    }

    // MARK: Pieces

    /// The client data and the challenge it names, once the challenge opens and is this ceremony's, this browser's
    /// and unexpired. Whether it was spent is known only when it is spent (`spend`).
    private func openChallenge(
        _ clientDataText: String, realm: String, ceremony: PasskeyChallenge.Ceremony, binding: String, now: Date
    ) throws -> ([UInt8], PasskeyChallenge) {
        let clientData = try Self.bytes(clientDataText, "response.clientDataJSON")
        let collected: CollectedClientData
        do throws(WebAuthnFailure) {
            collected = try CollectedClientData(clientData)
        } catch {
            throw PasskeyRefusal(error.reason.rawValue, error.detail)
        }
        guard var challenge = PasskeyChallenge(sealed: collected.challenge, opener: sealer, realm: realm) else {
            throw PasskeyRefusal(PasskeyRefusal.challengeInvalid, "clientDataJSON.challenge is not a challenge this realm issued")
        }
        guard challenge.ceremony == ceremony else {
            throw PasskeyRefusal(PasskeyRefusal.challengeInvalid, "the challenge was issued for another ceremony")
        }
        guard now < challenge.expiresAt else { throw PasskeyRefusal(PasskeyRefusal.challengeExpired, "the challenge expired; ask for new options") }
        guard ConstantTime.equal(challenge.binding, binding) else {
            throw PasskeyRefusal(PasskeyRefusal.challengeOfAnotherBrowser, "the challenge was issued to another browser session")
        }
        challenge.sealedText = collected.challenge
        return (clientData, challenge)
    }

    private func spend(_ challenge: PasskeyChallenge, realm: String, now: Date) async throws {
        guard try await singleUse.recordOnce(scope: "passkey:\(realm)", key: challenge.id, expiresAt: challenge.expiresAt, now: now) else {
            throw PasskeyRefusal(PasskeyRefusal.challengeUsed, "this challenge was used already; ask for new options")
        }
    }

    static func key(_ passkey: Passkey) throws -> COSECredentialKey {
        do {
            return try COSECredentialKey(bytes: try Base64URL.decode(passkey.publicKey))
        } catch {
            throw StoreError.unavailable("the stored key of passkey \(passkey.credentialId.prefix(16)) does not read: \(error)")
        }
    }

    static func bytes(_ text: String, _ field: String) throws -> [UInt8] {
        guard text.utf8.count <= 64 * 1024, let bytes = try? Base64URL.decode(text) else {
            throw PasskeyRefusal(WebAuthnReason.malformed.rawValue, "\(field) is not base64url")
        }
        return bytes
    }

    static func descriptor(_ passkey: Passkey) -> PublicKeyCredentialDescriptorJSON {
        PublicKeyCredentialDescriptorJSON(id: passkey.credentialId, transports: passkey.transports.isEmpty ? nil : passkey.transports)
    }

    /// Transports as WebAuthn names them, the unknown dropped (they are hints the browser gets back).
    static func transports(_ given: [String]?) -> [String] {
        let known: Set = ["usb", "nfc", "ble", "smart-card", "hybrid", "internal"]
        return Array((given ?? []).filter(known.contains).prefix(6))
    }

    static func uuid(_ bytes: [UInt8]) -> String {
        guard bytes.count == 16 else { return "00000000-0000-0000-0000-000000000000" }
        let hex = HexDigit.lowercase(bytes)
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.joined(separator: "-")
    }

    /// A name as the person typed it: trimmed, control characters dropped, at most 64 characters; nil for nothing left.
    static func cleanName(_ name: String?) -> String? {
        guard let name else { return nil }
        let cleaned = String(name.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }.map(Character.init))
            .trimmingCharacters(in: .whitespaces)
        return cleaned.isEmpty ? nil : String(cleaned.prefix(maximumNameLength))
    }
}

/// The realm has passkeys turned off.
struct PasskeysDisabled: Error, Sendable {
    let realm: String
}
