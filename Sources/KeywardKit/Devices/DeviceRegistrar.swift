// Registering an installation's device key with a realm's apps, resumably and with retries.
import Foundation
import KeywardJOSE
import KeywardWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Registers this installation's device key with the apps of one realm, rotates it, and signs requests with it.
///
/// A registration walks ``RegistrationPhase``'s state machine — `unregistered → challengeReceived → keyReady →
/// registering → registered` — and saves every move in its ``DeviceRegistrationStore``, so that a process stopped
/// half-way resumes correctly: an attempt interrupted before its answer goes out again with a fresh challenge and
/// the same device id and key, and the server answers `ALREADY_REGISTERED` if it had registered them.
/// ``registerDevice(appId:deviceId:)`` is idempotent: a device registered before is returned without any request.
///
/// Each attempt fetches a fresh challenge, makes (or reuses) the ES256 device key in the ``KeyStore``, signs the
/// challenge with it as proof of possession, asks the ``Attester`` for an attestation bound to the binding nonce
/// (waiting at most ``Options/attestationTimeout``, then going on without one), and sends the registration.
/// Failed attempts are retried by the ``RetryPolicy``: after no answer or a 5xx only.
///
/// Operations on one app id do not overlap: a second `registerDevice` while one is under way waits for it and
/// returns its result; a key rotation while anything else for the app is under way is refused with
/// ``KeywardKitError/registrationInProgress(appId:)``.
public actor DeviceRegistrar {
    /// How the registrar retries and how long it waits for an attestation.
    public struct Options: Sendable {
        /// When failed registrations and rotations are tried again.
        public var retry: RetryPolicy
        /// How long an attester may take before the registration goes on without an attestation.
        public var attestationTimeout: Duration

        /// The defaults: ``RetryPolicy/init(maxAttempts:maxDelay:jitter:sleep:)``'s five attempts, 30 s for the attester.
        public init(retry: RetryPolicy = RetryPolicy(), attestationTimeout: Duration = .seconds(30)) {
            self.retry = retry
            self.attestationTimeout = attestationTimeout
        }
    }

    /// What ``registerDevice(appId:deviceId:)`` came to.
    public struct RegistrationResult: Sendable, Equatable {
        /// The saved state, in phase `registered`.
        public let state: DeviceRegistrationState
        /// The key was registered before this call: the store said so (and nothing was sent), or the server
        /// answered `ALREADY_REGISTERED` to a registration sent again after an interrupted one.
        public let alreadyRegistered: Bool
        /// What became of the attestation of the registration this call sent; nil when it sent none.
        public let attestation: AttestationOutcome?
    }

    /// The realm's issuer URL, without a trailing slash.
    public nonisolated var issuer: String { api.issuer }
    /// The platform registrations name; the app must have been added on the server with it.
    public nonisolated let platform: DevicePlatform

    nonisolated let api: DeviceAPI
    let keyStore: any KeyStore
    let stateStore: any DeviceRegistrationStore
    let attester: any Attester
    /// The attester, when it can also sign with the keys it attests (``AppAttestAttester``).
    let asserter: (any Asserter)?
    let options: Options
    let clock: @Sendable () -> Date
    /// Registrations under way, by app id: a second caller awaits the first's task.
    var registrations: [String: Task<RegistrationResult, any Error>] = [:]
    /// App ids whose key is being rotated (or whose interrupted rotation is being settled).
    var rotations: Set<String> = []

    /// A registrar for the realm at `issuer` (`https://HOST/realms/NAME`) whose device keys live in `keyStore`
    /// (``FileKeyStore`` on Linux, `KeychainKeyStore` on Apple platforms, where ES256 keys are in the Secure
    /// Enclave) and whose registration states live in `stateStore`. `attester` gives the platform's attestation
    /// (``NoAttestation`` sends none); one that is also an ``Asserter`` (``AppAttestAttester``) signs the requests of a
    /// device whose App Attest attestation the server took. `clock` gives the device's time for signed requests.
    public init(
        issuer: String, platform: DevicePlatform, keyStore: any KeyStore, stateStore: any DeviceRegistrationStore,
        attester: any Attester = NoAttestation(), options: Options = Options(), session: URLSession = .shared,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.api = DeviceAPI(issuer: issuer, session: session)
        self.platform = platform
        self.keyStore = keyStore
        self.stateStore = stateStore
        self.attester = attester
        self.asserter = attester as? any Asserter
        self.options = options
        self.clock = clock
    }

    /// The saved registration state of `appId`, or nil when this installation never started one.
    public func state(appId: String) throws -> DeviceRegistrationState? {
        try DeviceAppId.check(appId)
        return try stateStore.state(appId: appId)
    }

    /// Registers this installation's key for `appId`, or returns the registration it has.
    ///
    /// `deviceId` chooses the device id of a first registration (1-128 letters, digits, `.`, `-`, `_`); by default
    /// a new UUID. A device whose key has gone from the key store (phase `keyInvalid`) registers afresh, with a new
    /// key and a new device id: the server keeps the old id bound to the lost key.
    ///
    /// Throws ``KeywardKitError/server(status:code:description:)`` with the server's code when it refuses
    /// (`NOT_CONFIGURED`, `ATTESTATION_UNAVAILABLE`, `INVALID_ATTESTATION`, …), after the last attempt's error when
    /// no attempt got through, and ``KeywardKitError/registeredElsewhere(appId:issuer:)`` when the state store
    /// holds this app's registration with another realm.
    public func registerDevice(appId: String, deviceId: String? = nil) async throws -> RegistrationResult {
        try DeviceAppId.check(appId)
        if let deviceId { try Self.checkDeviceId(deviceId) }
        if let running = registrations[appId] { return try await running.value }
        guard !rotations.contains(appId) else { throw KeywardKitError.registrationInProgress(appId: appId) }
        let task = Task { try await self.registerNow(appId: appId, deviceId: deviceId) }
        registrations[appId] = task
        defer { registrations[appId] = nil }
        return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    }

    private func registerNow(appId: String, deviceId: String?) async throws -> RegistrationResult {
        var state = try startingState(appId: appId, deviceId: deviceId)
        switch state.phase {
        case .registered:
            if try keyStore.key(named: state.keyName) != nil {
                return RegistrationResult(state: state, alreadyRegistered: true, attestation: nil)
            }
            try save(&state, moving: .keyInvalid)
            try startOver(&state)
        case .keyInvalid:
            try startOver(&state)
        case .registering where state.pendingKeyName != nil:
            // A key rotation stopped before its answer was known; the device is registered with one of its keys.
            rotations.insert(appId)
            defer { rotations.remove(appId) }
            try await settleInterruptedRotation(&state)
            return RegistrationResult(state: state, alreadyRegistered: true, attestation: nil)
        case .challengeReceived, .keyReady, .registering:
            // An attempt stopped part-way and its challenge is gone. The same device id and key go out again with a
            // fresh one; if the server had registered them, it answers ALREADY_REGISTERED.
            try save(&state, moving: .unregistered)
        case .unregistered:
            break
        }
        var number = 1
        while true {
            do {
                return try await attempt(&state)
            } catch {
                guard RetryPolicy.isRetryable(error), number < options.retry.maxAttempts else { throw error }
                try await options.retry.sleep(options.retry.delay(afterAttempt: number))
                number += 1
            }
        }
    }

    /// One attempt from `unregistered`: a fresh challenge, the key, its proof, the attestation, the registration,
    /// and for an App Attest attestation the check that the server took it (``confirmAppAttestKey(_:)``).
    /// A failure leaves the state `unregistered` again.
    private func attempt(_ state: inout DeviceRegistrationState) async throws -> RegistrationResult {
        let sentBefore = state.appAttestKeyId
        let challenge = try await api.challenge(appId: state.appId).challenge
        try save(&state, moving: .challengeReceived)
        do {
            let key = try DeviceKey(name: state.keyName, signer: try keyStore.loadOrCreateKey(named: state.keyName, algorithm: .es256))
            let proof = try key.derSignature(Array(challenge.utf8))
            try save(&state, moving: .keyReady)
            let attestation = try await AttestationDeadline.attestation(
                from: attester, bindingNonce: DeviceKey.bindingNonce(challenge: challenge, publicKeyText: key.publicKeyText),
                timeout: options.attestationTimeout
            )
            var body: JSONObject = [
                "app_id": .string(state.appId), "device_id": .string(state.deviceId), "challenge": .string(challenge),
                "public_key": .string(key.publicKeyText), "platform": .string(platform.rawValue),
                "proof": .string(Data(proof).base64EncodedString()),
            ]
            if let member = attestation.member { body["attestation"] = .object(member) }
            let sent = Self.appAttestKeyId(attestation.member)
            // Saved before it goes out: if the answer is lost, the next attempt's ALREADY_REGISTERED names this one's key.
            try save(&state, moving: .registering) { if let sent { $0.appAttestKeyId = sent } }
            let (created, answer) = try await api.register(body)
            try save(&state, moving: .registered) { registered in
                registered.deviceId = answer.deviceId
                registered.status = answer.status
                registered.registeredAt = Self.date(answer.registeredAt)
                registered.appAttestKeyId = Self.appAttestKeyCandidate(status: answer.status, created: created, sent: sent, sentBefore: sentBefore)
            }
            await confirmAppAttestKey(&state)
            return RegistrationResult(state: state, alreadyRegistered: !created, attestation: attestation.outcome)
        } catch {
            // Saving the move to `registered` is the one failure after which the state is already there.
            if state.phase != .registered { try? save(&state, moving: .unregistered) }
            throw error
        }
    }

    /// The saved state of `appId`, or a new one in phase `unregistered` (saved) with its device id and key name.
    private func startingState(appId: String, deviceId: String?) throws -> DeviceRegistrationState {
        if let saved = try stateStore.state(appId: appId) {
            guard saved.issuer == api.issuer else { throw KeywardKitError.registeredElsewhere(appId: appId, issuer: saved.issuer) }
            if let deviceId, deviceId != saved.deviceId, saved.phase != .keyInvalid {
                throw KeywardKitError.deviceIdMismatch(registered: saved.deviceId, requested: deviceId)
            }
            return saved
        }
        let state = DeviceRegistrationState(appId: appId, issuer: api.issuer, deviceId: deviceId ?? Self.newDeviceId(), keyName: Self.newKeyName())
        try stateStore.save(state)
        return state
    }

    /// `keyInvalid → unregistered`: a new device id and a new key name, the clock offset kept.
    private func startOver(_ state: inout DeviceRegistrationState) throws {
        try save(&state, moving: .unregistered) { fresh in
            fresh.deviceId = Self.newDeviceId()
            fresh.keyName = Self.newKeyName()
            fresh.pendingKeyName = nil
            fresh.status = nil
            fresh.registeredAt = nil
            fresh.keyRotatedAt = nil
            fresh.appAttestKeyId = nil
        }
    }

    /// Moves `state` to `next` with `change` applied, saves it, and only then updates the caller's copy: what the
    /// caller holds is never ahead of what is saved.
    func save(
        _ state: inout DeviceRegistrationState, moving next: RegistrationPhase, _ change: (inout DeviceRegistrationState) -> Void = { _ in }
    ) throws {
        var moved = state
        try moved.move(to: next)
        change(&moved)
        try stateStore.save(moved)
        state = moved
    }

    /// The device key of a registered device. A key gone from the store moves the registration to `keyInvalid`
    /// (the next `registerDevice` starts over) and throws ``KeywardKitError/noSuchKey(_:)``.
    func deviceKey(_ state: inout DeviceRegistrationState) throws -> DeviceKey {
        guard let signer = try keyStore.key(named: state.keyName) else {
            if state.phase == .registered { try save(&state, moving: .keyInvalid) }
            throw KeywardKitError.noSuchKey(state.keyName)
        }
        return try DeviceKey(name: state.keyName, signer: signer)
    }

    static func checkDeviceId(_ deviceId: String) throws {
        let allowed = deviceId.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                true
            default: false
            }
        }
        guard (1...128).contains(deviceId.utf8.count), allowed else {
            throw KeywardKitError.invalidOption("device-id", "'\(deviceId.prefix(80))' is not 1-128 letters, digits, '.', '-' or '_'")
        }
    }

    /// The key id an `app-attest` attestation member names.
    static func appAttestKeyId(_ member: JSONObject?) -> String? {
        guard let member, member["type"]?.stringValue == "app-attest" else { return nil }
        return member["keyId"]?.stringValue
    }

    static func newDeviceId() -> String { UUID().uuidString.lowercased() }

    /// Key names are letters, digits, '-' and '_' (``KeyStore``); the app id may hold dots, so the name is its own.
    static func newKeyName() -> String { "device-" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "") }

    /// The server's RFC 3339 times.
    static func date(_ text: String?) -> Date? {
        text.flatMap { try? Date.ISO8601FormatStyle().parse($0) }
    }
}
