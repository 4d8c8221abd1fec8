// Device registration: challenges, proof of possession, attestation judged by policy, key rotation, limits.
import Crypto
import Foundation
import HTTPTypes
import KeywardAttestation
import KeywardJOSE
import KeywardWire
import Logging

/// Device registration: challenges, proof of possession, attestation judged by the app's policy, and the stored
/// device. Routes only translate HTTP to these calls.
public final class DeviceService: Sendable {
    private let store: any DeviceStore
    private let singleUse: any SingleUseStore
    private let challengeKey: SymmetricKey
    private let attestations: any DeviceAttestationVerifier
    private let audit: AuditLog
    private let metrics: KeywardMetrics
    private let clock: any KeywardClock
    let challengeLifetime: TimeInterval
    /// What other parts carry to a rotated key (Core's seam).
    private let deviceKeys: DeviceKeys
    private let logger: Logger
    /// Refusals cost their sender nothing: one audit row per app and reason a minute (security review H2).
    private let refusalAudit = RefusalAuditSampler()
    private let googleDecodes: GoogleDecodeBudget

    let limits: Limits

    static let defaultChallengeLifetime: TimeInterval = 90

    /// Bounds on what registrations nothing vouches for may store: an app whose policy keeps unattested keys lets
    /// anyone who knows its id add a row (security review M1).
    public struct Limits: Sendable {
        /// Devices of one app waiting for an operator's decision at once.
        public var pendingPerApp: Int
        /// How long a pending device waits for a decision before the sweeper deletes it.
        public var pendingLifetime: TimeInterval
        /// Registrations of one app within an hour that no verified attestation vouches for.
        public var unattestedPerHour: Int
        /// Calls to Google's decodeIntegrityToken one client address may cause within an hour (security review M1).
        public var googleDecodesPerAddressPerHour: Int = 20
        /// Calls to Google's decodeIntegrityToken for one app within an hour, on this node: Google's default quota is
        /// 10,000 a day per project.
        public var googleDecodesPerAppPerHour: Int = 400

        public static let `default` = Limits(pendingPerApp: 10_000, pendingLifetime: 7 * 86400, unattestedPerHour: 10_000)
    }

    init(
        store: any DeviceStore, singleUse: any SingleUseStore, challengeKey: SymmetricKey, attestations: any DeviceAttestationVerifier,
        audit: AuditLog, metrics: KeywardMetrics, clock: any KeywardClock, challengeLifetime: TimeInterval = DeviceService.defaultChallengeLifetime,
        limits: Limits = .default, deviceKeys: DeviceKeys = DeviceKeys(), logger: Logger = Logger(label: "keyward.devices")
    ) {
        (self.deviceKeys, self.logger) = (deviceKeys, logger)
        self.limits = limits
        googleDecodes = GoogleDecodeBudget(perAddress: limits.googleDecodesPerAddressPerHour, perApp: limits.googleDecodesPerAppPerHour)
        self.store = store
        self.singleUse = singleUse
        self.challengeKey = challengeKey
        self.attestations = attestations
        self.audit = audit
        self.metrics = metrics
        self.clock = clock
        self.challengeLifetime = challengeLifetime
    }

    public struct IssuedChallenge: Sendable {
        public let challenge: String
        public let expiresAt: Date
    }

    /// A fresh challenge for an installation of `appId`. Writes nothing (see `DeviceChallenge`).
    func challenge(realm: String, appId: String) async throws(DeviceError) -> IssuedChallenge {
        _ = try await app(realm: realm, appId: appId)
        let challenge = DeviceChallenge.issue(realm: realm, appId: appId, now: clock.now(), lifetime: challengeLifetime)
        return IssuedChallenge(challenge: challenge.encoded(key: challengeKey), expiresAt: challenge.expiresAt)
    }

    public struct Registration: Sendable {
        public let device: Device
        /// The key was registered before: `device` is the existing record and nothing changed.
        public let alreadyRegistered: Bool
    }

    /// Registers the key in `request`. Checks run cheapest first, and the challenge is spent only once the proof
    /// of possession holds, so a garbage request cannot burn an installation's challenge.
    func register(
        realm: String, request: RegistrationRequest, developmentTraffic: Bool, clientAddress: String = ClientAddress.unknown
    ) async throws(DeviceError) -> Registration {
        do {
            let registration = try await registerChecked(realm: realm, request: request, developmentTraffic: developmentTraffic, clientAddress: clientAddress)
            metrics.deviceRegistration(outcome: registration.alreadyRegistered ? "already_registered" : registration.device.status.rawValue)
            return registration
        } catch {
            metrics.deviceRegistration(outcome: error.code.rawValue)
            throw error
        }
    }

    private func registerChecked(
        realm: String, request: RegistrationRequest, developmentTraffic: Bool, clientAddress: String
    ) async throws(DeviceError) -> Registration {
        let now = clock.now()
        let app = try await app(realm: realm, appId: request.appId)
        guard request.platform == app.platform else {
            throw .invalidRequest("app '\(displayable(app.appId))' is an \(app.platform.rawValue) app; platform says \(request.platform.rawValue)")
        }
        if developmentTraffic, !(app.devBypass && app.environment == .development) {
            metrics.devModeRefused()
            await recordRefusal(.devModeRefused, app: app, reason: "dev-mode", details: ["environment": app.environment.rawValue])
            throw DeviceError(.forbidden, .devModeRefused, "app '\(displayable(app.appId))' does not accept development traffic")
        }
        let challenge = try openChallenge(request.challenge, realm: realm, appId: app.appId, now: now)
        let key = try Self.verifyProof(publicKey: request.publicKey, proof: request.proof, challenge: request.challenge)
        let thumbprint = try Self.thumbprint(key)

        try await spend(challenge, now: now)

        if let existing = try await lookup({ try await self.store.device(realm: realm, appId: app.appId, keyThumbprint: thumbprint) }) {
            if let wanted = request.deviceId, wanted != existing.deviceId {
                throw DeviceError(.conflict, .keyAlreadyRegistered, "this key is registered already for another device id")
            }
            guard existing.removedAt == nil else {
                throw DeviceError(.forbidden, .deviceRevoked, "this key's device was removed; generate a new key and register it")
            }
            return Registration(device: existing, alreadyRegistered: true)
        }
        if let wanted = request.deviceId, try await lookup({ try await self.store.device(realm: realm, appId: app.appId, deviceId: wanted) }) != nil {
            throw DeviceError(.conflict, .deviceIdTaken, "device id '\(wanted)' is registered with another key; rotate its key instead")
        }

        let judged = try await judge(request, app: app, binding: BindingNonce(challenge: request.challenge, publicKey: request.publicKeyText),
                                     developmentTraffic: developmentTraffic, clientAddress: clientAddress, now: now)
        if judged.verified == nil { try await checkUnattestedLimits(app: app, status: judged.status, now: now) }
        let device = Device(
            realm: realm, appId: app.appId, deviceId: request.deviceId ?? UUID().uuidString.lowercased(), publicKey: request.publicKey,
            keyThumbprint: thumbprint, platform: app.platform, status: judged.status, attestation: String(decoding: StrictJSON.serialize(judged.summary), as: UTF8.self),
            attested: judged.verified != nil,
            appAttestKeyId: judged.verified?.appAttestKeyId, appAttestPublicKey: judged.verified?.appAttestPublicKey,
            assertionCounter: judged.verified?.appAttestKeyId == nil ? nil : 0,
            registeredAt: StorageTime.asStored(now), keyRotatedAt: nil
        )
        do {
            try await store.createDevice(device)
        } catch StoreError.conflict {
            // Another registration of this key or id won the race between the lookups above and this insert.
            throw DeviceError(.conflict, .registrationInProgress, "another registration of this device or key has just completed; retry")
        } catch {
            throw .unavailable
        }
        await audit.record(.deviceRegistered, realm: realm, userId: nil, details: [
            "app_id": app.appId, "device_id": device.deviceId, "status": device.status.rawValue,
            "attestation": judged.summary["type"]?.stringValue ?? "none",
        ])
        return Registration(device: device, alreadyRegistered: false)
    }

    /// The registered device that signed this request (see `SignedRequest`).
    func authenticate(realm: String, request: SignedRequest, deviceKeyOnly: Bool = false) async throws(DeviceError) -> Device {
        try await DeviceRequestAuthenticator(store: store, singleUse: singleUse, clock: clock) { device, failure in
            await self.recordRefusal(.deviceRequestRefused, realm: device.realm, appId: device.appId, reason: failure.reason.rawValue, details: [
                "device_id": device.deviceId, "detail": failure.detail,
            ])
        }.authenticate(request, realm: realm, deviceKeyOnly: deviceKeyOnly)
    }

    /// Replaces an authenticated device's key: the request is signed by the old key over a fresh challenge and
    /// the new key, and the new key's own signature over the challenge proves it is held. The device id stays; the
    /// old key is refused from then on.
    func rotateKey(device: Device, rotation: KeyRotationRequest) async throws(DeviceError) -> Device {
        let now = clock.now()
        let challenge = try openChallenge(rotation.challenge, realm: device.realm, appId: device.appId, now: now)
        let key = try Self.verifyProof(publicKey: rotation.newPublicKey, proof: rotation.proof, challenge: rotation.challenge)
        let thumbprint = try Self.thumbprint(key)
        guard thumbprint != device.keyThumbprint else { throw .invalidRequest("new_public_key is the device's current key") }
        let summary = try await rotatedSummary(device: device, rotation: rotation, now: now)
        try await spend(challenge, now: now)
        let replaced: Bool
        do {
            replaced = try await store.replaceKey(
                realm: device.realm, appId: device.appId, deviceId: device.deviceId, previousThumbprint: device.keyThumbprint,
                publicKey: rotation.newPublicKey, thumbprint: thumbprint, attestation: summary, at: now
            )
        } catch StoreError.conflict {
            throw DeviceError(.conflict, .keyAlreadyRegistered, "the new key is registered already for this app")
        } catch {
            throw .unavailable
        }
        guard replaced else { throw DeviceError(.conflict, .registrationInProgress, "the device's key changed meanwhile; sign with its current key") }
        await audit.record(.deviceKeyRotated, realm: device.realm, userId: device.userId, details: ["app_id": device.appId, "device_id": device.deviceId])
        var rotated = device
        (rotated.publicKey, rotated.keyThumbprint, rotated.attestation, rotated.keyRotatedAt) = (rotation.newPublicKey, thumbprint, summary, StorageTime.asStored(now))
        let logger = self.logger
        guard let jwk = try? JWK(subjectPublicKeyInfo: Array(key.derRepresentation)) else { return rotated }
        await deviceKeys.runRotationSteps(DeviceKeyLookup.key(rotated), previousThumbprint: device.keyThumbprint, publicKey: jwk, at: now) { error in
            logger.warning("a part kept what it held on the device's old key", metadata: ["device": "\(device.deviceId)", "error": "\(error)"])
        }
        return rotated
    }

    /// The attestation summary the device has once its key is `rotation`'s. A key Android Key Attestation certified
    /// may only be replaced by another it certifies — not a plain key, nor one a Play Integrity token stands beside,
    /// which vouches for the app and not for any key: otherwise code running once inside the app could swap in a key
    /// it can export, and the hardware guarantee would be gone for good (security review M2, second review M2); and
    /// at the device's security level or a higher one (StrongBox does not give way to the TEE). The summary then
    /// describes the new key. Other devices rotate without an attestation, and their summary says the
    /// key in use is not the one their registration vouched for. App Attest devices keep their attested App Attest
    /// key for assertions, so theirs is not asked again.
    private func rotatedSummary(device: Device, rotation: KeyRotationRequest, now: Date) async throws(DeviceError) -> String {
        var summary = (try? StrictJSON.parseObject(Array(device.attestation.utf8))) ?? [:]
        let keyAttested = summary["type"]?.stringValue == "android-key" && summary["failed"] == nil && summary["unreadable"] == nil
        guard keyAttested else {
            if let type = summary["type"]?.stringValue, type != "none", type != "app-attest" {
                summary["key_rotated_unattested"] = .bool(true)
            }
            return String(decoding: StrictJSON.serialize(summary), as: UTF8.self)
        }
        guard let attestation = rotation.attestation, case .androidKey = attestation else {
            let sent = rotation.attestation.map { " (an attestation of type \($0.typeName) vouches for the app, not for the key)" } ?? ""
            throw DeviceError(.badRequest, .attestationUnavailable, "this device's key is hardware-attested: rotate to a key with its own Android Key Attestation\(sent)")
        }
        let app = try await app(realm: device.realm, appId: device.appId)
        do throws(AttestationFailure) {
            let verified = try await attestations.verify(
                attestation, app: app, binding: BindingNonce(challenge: rotation.challenge, publicKey: rotation.newPublicKeyText),
                publicKey: rotation.newPublicKey, now: now
            )
            let (before, after) = (summary["security_level"]?.stringValue, verified.summary["security_level"]?.stringValue)
            guard Self.securityRank(after) >= Self.securityRank(before) else {
                throw AttestationFailure(.keyPropertiesRefused, "the new key's security level is \(after ?? "unknown"); the device's key was \(before ?? "unknown")")
            }
            return String(decoding: StrictJSON.serialize(verified.summary), as: UTF8.self)
        } catch {
            await recordRefusal(.deviceRegistrationRefused, app: app, reason: error.reason.rawValue, details: ["attestation": "rotation", "detail": error.detail])
            throw .invalidAttestation(error)
        }
    }

    /// Android's security levels, weakest first: a rotation keeps the device's or moves up.
    private static func securityRank(_ level: String?) -> Int {
        ["SOFTWARE", "TRUSTED_ENVIRONMENT", "STRONG_BOX"].firstIndex(of: level ?? "") ?? -1
    }

    private struct Judgement {
        var status: Device.Status
        var summary: JSONObject
        var verified: VerifiedAttestation?
    }

    /// The attestation (or its absence) judged by the app's policy.
    private func judge(
        _ request: RegistrationRequest, app: DeviceApp, binding: BindingNonce, developmentTraffic: Bool, clientAddress: String, now: Date
    ) async throws(DeviceError) -> Judgement {
        guard let attestation = request.attestation else { return try missing(app, developmentTraffic: developmentTraffic, summary: ["type": .string("none")]) }
        try await spendGoogleDecode(attestation, app: app, clientAddress: clientAddress, now: now)
        do throws(AttestationFailure) {
            let verified = try await attestations.verify(attestation, app: app, binding: binding, publicKey: request.publicKey, now: now)
            return Judgement(status: .registered, summary: verified.summary, verified: verified)
        } catch where error.reason == .verifierUnavailable {
            // The server could not judge it (Google unreachable, no keys configured): nothing is known about the
            // device, so nothing is stored, and the client may retry.
            await recordRefusal(.deviceRegistrationRefused, app: app, reason: error.reason.rawValue, details: [
                "attestation": attestation.typeName, "detail": error.detail,
            ])
            throw DeviceError(.serviceUnavailable, .unavailable, "the attestation cannot be verified right now; retry later", reason: error.reason.rawValue)
        } catch where error.reason == .malformed {
            // Unreadable is no attestation at all: the missing policy decides, so a client cannot trade a refusal
            // for the weaker failed policy by sending garbage (security review H3).
            return try missing(app, developmentTraffic: developmentTraffic, summary: ["type": .string(attestation.typeName), "unreadable": .bool(true)])
        } catch {
            var summary: JSONObject = ["type": .string(attestation.typeName), "failed": .string(error.reason.rawValue)]
            if developmentTraffic {
                summary["dev_bypass"] = .bool(true)
                return Judgement(status: .registered, summary: summary)
            }
            switch app.failedAttestation {
            case .reject:
                await recordRefusal(.deviceRegistrationRefused, app: app, reason: error.reason.rawValue, details: [
                    "attestation": attestation.typeName, "detail": error.detail,
                ])
                throw .invalidAttestation(error)
            case .pending: return Judgement(status: .pending, summary: summary)
            case .accept: return Judgement(status: .registered, summary: summary)
            }
        }
    }

    /// A Play Integrity token for an app Google decodes for costs a call on the app's quota: one only a well-formed
    /// token may spend (a malformed one fails in the decoder, before the call, and is counted here), and only within
    /// the client address's and the app's hourly budget (second security review M1).
    private func spendGoogleDecode(_ attestation: RegistrationRequest.Attestation, app: DeviceApp, clientAddress: String, now: Date) async throws(DeviceError) {
        guard app.playIntegrityGoogle, case .playIntegrity(let token) = attestation else { return }
        do throws(AttestationFailure) {
            try PlayIntegrityToken.checkShape(token)
        } catch {
            metrics.playIntegrityGoogleRefused(reason: "malformed")
            return
        }
        guard let refusal = googleDecodes.take(address: clientAddress, app: "\(app.realm)/\(app.appId)", now: now) else { return }
        metrics.playIntegrityGoogleRefused(reason: refusal.rawValue)
        let setting = refusal == .addressLimit ? "devices.playIntegrity.googleCallsPerAddressPerHour" : "devices.playIntegrity.googleCallsPerAppPerHour"
        await recordRefusal(.deviceRegistrationRefused, app: app, reason: ErrorCode.tooManyRegistrations.rawValue, details: ["limit": setting])
        let whose = refusal == .addressLimit ? "this client address" : "app '\(displayable(app.appId))'"
        throw DeviceError(.tooManyRequests, .tooManyRegistrations, "\(whose) has used its Play Integrity checks for the hour; retry later")
    }

    /// Whoever knows an app id can register a key nothing vouches for where the app's policy keeps those; the
    /// limits bound the rows that costs (security review M1). Counted before the insert, so requests racing past a
    /// full count can overshoot a limit by at most their number.
    private func checkUnattestedLimits(app: DeviceApp, status: Device.Status, now: Date) async throws(DeviceError) {
        let (realm, appId) = (app.realm, app.appId)
        if status == .pending {
            let limit = limits.pendingPerApp
            let pending = try await lookup { try await self.store.countPendingDevices(realm: realm, appId: appId, upTo: limit) }
            guard pending < limit else {
                await recordRefusal(.deviceRegistrationRefused, app: app, reason: ErrorCode.tooManyRegistrations.rawValue, details: ["limit": "devices.pendingLimit"])
                throw DeviceError(.tooManyRequests, .tooManyRegistrations,
                                  "app '\(displayable(appId))' has \(limit) devices waiting for an operator's decision; retry once some are decided")
            }
        }
        let limit = limits.unattestedPerHour
        let recent = try await lookup {
            try await self.store.countUnattestedDevices(realm: realm, appId: appId, registeredSince: now.addingTimeInterval(-3600), upTo: limit)
        }
        guard recent < limit else {
            await recordRefusal(.deviceRegistrationRefused, app: app, reason: ErrorCode.tooManyRegistrations.rawValue, details: ["limit": "devices.unattestedPerHour"])
            throw DeviceError(.tooManyRequests, .tooManyRegistrations,
                              "app '\(displayable(appId))' registered \(limit) devices without a verified attestation within the hour; retry later")
        }
    }

    /// Keys are an existing app and a reason from a closed set, so the sampler's map stays small.
    private func recordRefusal(_ type: AuditEvent.EventType, app: DeviceApp, reason: String, details: [String: String]) async {
        await recordRefusal(type, realm: app.realm, appId: app.appId, reason: reason, details: details)
    }

    private func recordRefusal(_ type: AuditEvent.EventType, realm: String, appId: String, reason: String, details: [String: String]) async {
        guard let folded = refusalAudit.admit(.init(realm: realm, reason: "\(type.rawValue):\(appId):\(reason)"), now: clock.now()) else { return }
        var details = details
        details["app_id"] = appId
        details["reason"] = reason
        if folded > 0 { details["suppressed"] = String(folded) }
        await audit.record(type, realm: realm, userId: nil, details: details)
    }

    /// No usable attestation: the app's missing policy (or the development bypass) decides.
    private func missing(_ app: DeviceApp, developmentTraffic: Bool, summary: JSONObject) throws(DeviceError) -> Judgement {
        if developmentTraffic {
            var bypassed = summary
            bypassed["dev_bypass"] = .bool(true)
            return Judgement(status: .registered, summary: bypassed)
        }
        switch app.missingAttestation {
        case .reject:
            throw DeviceError(.badRequest, .attestationUnavailable, "app '\(displayable(app.appId))' requires an attestation of the key")
        case .pending: return Judgement(status: .pending, summary: summary)
        case .accept: return Judgement(status: .registered, summary: summary)
        }
    }

    private func app(realm: String, appId: String) async throws(DeviceError) -> DeviceApp {
        guard let app = try await lookup({ try await self.store.app(realm: realm, appId: appId) }) else {
            throw .notConfigured(appId, realm: realm)
        }
        return app
    }

    private func lookup<Value>(_ read: () async throws -> Value) async throws(DeviceError) -> Value {
        do {
            return try await read()
        } catch {
            throw .unavailable
        }
    }

    /// A challenge this service issued for the app, not yet expired (registration and rotation alike).
    private func openChallenge(_ text: String, realm: String, appId: String, now: Date) throws(DeviceError) -> DeviceChallenge {
        do throws(DeviceChallenge.Refusal) {
            return try DeviceChallenge.open(text, realm: realm, appId: appId, key: challengeKey, now: now)
        } catch .expired {
            throw DeviceError(.badRequest, .challengeExpired, "the challenge has expired; ask for a new one")
        } catch {
            throw DeviceError(.badRequest, .invalidChallenge, "the challenge was not issued for this app in this realm")
        }
    }

    /// Spends the challenge: one atomic insert of its random part, so of two requests with it only one gets past.
    private func spend(_ challenge: DeviceChallenge, now: Date) async throws(DeviceError) {
        let spent: Bool
        do {
            spent = try await singleUse.recordOnce(
                scope: "device-challenge:" + challenge.realm, key: Base64URL.encode(challenge.nonce),
                expiresAt: challenge.expiresAt.addingTimeInterval(60), now: now
            )
        } catch {
            throw .unavailable
        }
        guard spent else { throw DeviceError(.badRequest, .invalidChallenge, "the challenge was used already; ask for a new one") }
    }

    /// The new key's signature over the challenge: possession proven whatever the attestation says.
    private static func verifyProof(publicKey: [UInt8], proof: [UInt8], challenge: String) throws(DeviceError) -> P256.Signing.PublicKey {
        guard let key = try? P256.Signing.PublicKey(x963Representation: publicKey) else {
            throw DeviceError(.badRequest, .invalidPublicKey, "the public key is not a point on P-256")
        }
        guard let signature = DeviceSignature.ecdsa(proof), key.isValidSignature(signature, for: Array(challenge.utf8)) else {
            throw DeviceError(.badRequest, .invalidProof, "proof is not the new key's ECDSA P-256 SHA-256 signature over the challenge")
        }
        return key
    }

    private static func thumbprint(_ key: P256.Signing.PublicKey) throws(DeviceError) -> String {
        guard let jwk = try? JWK(subjectPublicKeyInfo: Array(key.derRepresentation)) else {
            throw DeviceError(.badRequest, .invalidPublicKey, "public_key cannot be used")
        }
        return jwk.thumbprint()
    }
}

extension RegistrationRequest.Attestation {
    var typeName: String {
        switch self {
        case .appAttest: "app-attest"
        case .androidKey: "android-key"
        case .playIntegrity: "play-integrity"
        }
    }
}
