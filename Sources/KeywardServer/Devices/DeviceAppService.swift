// The operator's side of device apps: add, declare, list, decide on devices, remove, every setting checked.
import Foundation
import KeywardJOSE

/// The operator's side of device apps: register, list, remove. Every setting is checked here, so the CLI and any
/// later admin API refuse the same things with the same words.
public final class DeviceAppService: Sendable {
    private let store: any DeviceStore
    private let masterKey: MasterKey
    private let audit: AuditLog
    private let clock: any KeywardClock
    /// What other parts end with a device (Core's seam).
    private let deviceKeys: DeviceKeys

    init(store: any DeviceStore, masterKey: MasterKey, audit: AuditLog, clock: any KeywardClock, deviceKeys: DeviceKeys = DeviceKeys()) {
        self.deviceKeys = deviceKeys
        self.store = store
        self.masterKey = masterKey
        self.audit = audit
        self.clock = clock
    }

    /// An app as the operator describes it; `add` turns it into a `DeviceApp` or names the setting at fault.
    public struct Registration: Sendable {
        public var realm: String
        public var appId: String
        public var platform: DeviceApp.Platform
        public var environment: DeviceApp.Environment
        public var teamId: String?
        public var bundleId: String?
        public var packages: [String]
        public var signingCertDigests: [String]
        public var missingAttestation: DeviceApp.AttestationPolicy
        public var failedAttestation: DeviceApp.AttestationPolicy
        public var devBypass: Bool
        /// Android: Play Integrity response keys, for apps that send Play Integrity tokens.
        public var playIntegrityKeys: PlayIntegrityKeys?
        /// Android: Play Integrity tokens decoded by Google with the server's service account instead.
        public var playIntegrityGoogle: Bool

        public init(
            realm: String, appId: String, platform: DeviceApp.Platform, environment: DeviceApp.Environment, teamId: String? = nil,
            bundleId: String? = nil, packages: [String] = [], signingCertDigests: [String] = [],
            missingAttestation: DeviceApp.AttestationPolicy = .reject, failedAttestation: DeviceApp.AttestationPolicy = .reject,
            devBypass: Bool = false, playIntegrityKeys: PlayIntegrityKeys? = nil, playIntegrityGoogle: Bool = false
        ) {
            self.realm = realm
            self.appId = appId
            self.platform = platform
            self.environment = environment
            self.teamId = teamId
            self.bundleId = bundleId
            self.packages = packages
            self.signingCertDigests = signingCertDigests
            self.missingAttestation = missingAttestation
            self.failedAttestation = failedAttestation
            self.devBypass = devBypass
            self.playIntegrityKeys = playIntegrityKeys
            self.playIntegrityGoogle = playIntegrityGoogle
        }
    }

    public func add(_ registration: Registration) async throws -> DeviceApp {
        var app = try Self.validated(registration, now: clock.now())
        app.sealedPlayIntegrityKeys = try registration.playIntegrityKeys.map { try $0.sealed(for: app, with: masterKey) }
        do {
            try await store.createApp(app)
        } catch StoreError.conflict(let message) {
            throw DeviceAppError(message, kind: .conflict)
        } catch StoreError.notFound(let message) {
            throw DeviceAppError(message, kind: .notFound)
        }
        await audit.record(.deviceAppAdded, realm: app.realm, userId: nil, details: [
            "app_id": app.appId, "platform": app.platform.rawValue, "environment": app.environment.rawValue,
            "missing_attestation": app.missingAttestation.rawValue, "failed_attestation": app.failedAttestation.rawValue,
            "dev_bypass": String(app.devBypass),
            "play_integrity": app.playIntegrityGoogle ? "google" : app.sealedPlayIntegrityKeys != nil ? "keys" : "none",
        ])
        return app
    }

    public enum Declared: Sendable, Equatable {
        case added, updated, unchanged
    }

    /// Makes the stored app what `registration` says (the apps file of the configuration): added when missing,
    /// its settings replaced when they differ, its devices kept either way.
    public func declare(_ registration: Registration) async throws -> Declared {
        var app = try Self.validated(registration, now: clock.now())
        guard let existing = try await store.app(realm: app.realm, appId: app.appId) else {
            _ = try await add(registration)
            return .added
        }
        app.createdAt = existing.createdAt
        let storedKeys = try PlayIntegrityKeys.opened(for: existing, with: masterKey)
        var comparable = existing
        comparable.sealedPlayIntegrityKeys = nil
        if comparable == app, storedKeys == registration.playIntegrityKeys { return .unchanged }
        app.sealedPlayIntegrityKeys = try registration.playIntegrityKeys.map { try $0.sealed(for: app, with: masterKey) }
        guard try await store.updateApp(app) else { throw DeviceAppError("app '\(app.appId)' disappeared while it was updated", kind: .conflict) }
        await audit.record(.deviceAppUpdated, realm: app.realm, userId: nil, details: [
            "app_id": app.appId, "environment": app.environment.rawValue, "missing_attestation": app.missingAttestation.rawValue,
            "failed_attestation": app.failedAttestation.rawValue, "dev_bypass": String(app.devBypass),
        ])
        return .updated
    }

    public func list(realm: String) async throws -> [DeviceApp] {
        try await store.listApps(realm: realm)
    }

    public func app(realm: String, appId: String) async throws -> DeviceApp? {
        try await store.app(realm: realm, appId: appId)
    }

    /// One page of the app's devices by id (the admin API), read in the statement's own limit.
    public func devices(realm: String, appId: String, after: String?, limit: Int) async throws -> [Device] {
        try await store.devices(realm: realm, appId: appId, after: after, limit: limit)
    }

    public func devices(realm: String, appId: String) async throws -> [Device] {
        try await store.listDevices(realm: realm, appId: appId)
    }

    /// An operator's decision on a device: `registered` lets its signed requests in, `rejected` refuses them (and keeps
    /// the key from registering again under another id). Takes effect on the device's next request, on every node.
    public func decide(realm: String, appId: String, deviceId: String, status: Device.Status) async throws {
        guard status != .pending else { throw DeviceAppError("a device can be approved (registered) or rejected") }
        guard try await store.setStatus(realm: realm, appId: appId, deviceId: deviceId, to: status) else {
            throw DeviceAppError("no device '\(deviceId)' is registered for app '\(appId)' in realm '\(realm)'", kind: .notFound)
        }
        await audit.record(status == .registered ? .deviceApproved : .deviceRejected, realm: realm, userId: nil, details: [
            "app_id": appId, "device_id": deviceId,
        ])
        if status == .rejected, let device = try await store.device(realm: realm, appId: appId, deviceId: deviceId) {
            try await deviceKeys.runRemovalSteps(DeviceKeyLookup.key(device), at: clock.now())
        }
    }

    /// Removes a registered device, by its person (`userId`: only one of their own) or an operator (nil). It is
    /// refused everywhere from the next request, on every node — tokens bound to its key, its signed requests,
    /// approvals from it — and kept so its key cannot register again; what other parts hold for it goes
    /// (`DeviceRemovalStep`). Removing it again runs those steps again. Returns the device, nil when there is none.
    @discardableResult
    public func removeDevice(realm: String, appId: String, deviceId: String, userId: String? = nil) async throws -> Device? {
        let now = clock.now()
        guard let removed = try await store.markRemoved(realm: realm, appId: appId, deviceId: deviceId, userId: userId, at: now) else { return nil }
        await audit.record(.deviceRemoved, realm: realm, userId: removed.userId, details: [
            "app_id": appId, "device_id": deviceId, "by": userId == nil ? "operator" : "person",
        ])
        try await deviceKeys.runRemovalSteps(DeviceKeyLookup.key(removed), at: now)
        return removed
    }

    /// A person's devices (those they signed in on), newest seen first; removed ones included, marked.
    public func devices(realm: String, userId: String) async throws -> [Device] {
        try await store.devices(realm: realm, userId: userId)
    }

    /// Removes the app and its devices: their signed requests stop at once, and what other parts held for each
    /// device goes.
    public func remove(realm: String, appId: String) async throws {
        let devices = try await store.listDevices(realm: realm, appId: appId)
        guard try await store.removeApp(realm: realm, appId: appId) else {
            throw DeviceAppError("app '\(appId)' is not registered in realm '\(realm)'", kind: .notFound)
        }
        await audit.record(.deviceAppRemoved, realm: realm, userId: nil, details: ["app_id": appId])
        let now = clock.now()
        try await runEach(devices) { try await deviceKeys.runRemovalSteps(DeviceKeyLookup.key($0, usable: false), at: now) }
    }

    static func validated(_ registration: Registration, now: Date) throws(DeviceAppError) -> DeviceApp {
        let appId = registration.appId
        guard (1...255).contains(appId.utf8.count), appId.utf8.allSatisfy(Self.isNameByte) else {
            throw DeviceAppError("app id '\(appId)' must be 1-255 characters of letters, digits, '.', '-' or '_'")
        }
        var app = DeviceApp(
            realm: registration.realm, appId: appId, platform: registration.platform, environment: registration.environment,
            teamId: nil, bundleId: nil, packages: [], signingCertDigests: [], missingAttestation: registration.missingAttestation,
            failedAttestation: registration.failedAttestation, devBypass: registration.devBypass, sealedPlayIntegrityKeys: nil, createdAt: now
        )
        if registration.devBypass, registration.environment != .development {
            throw DeviceAppError("--dev-bypass is allowed only for apps in the development environment")
        }
        switch registration.platform {
        case .ios:
            guard let teamId = registration.teamId, teamId.utf8.count == 10, teamId.utf8.allSatisfy({ Self.isUpperAlphanumeric($0) }) else {
                throw DeviceAppError("--team-id must be the 10-character Apple team id (A-Z, 0-9)")
            }
            guard let bundleId = registration.bundleId, (1...155).contains(bundleId.utf8.count), bundleId.utf8.allSatisfy(Self.isNameByte) else {
                throw DeviceAppError("--bundle-id must be the app's bundle identifier (letters, digits, '.', '-')")
            }
            guard registration.packages.isEmpty, registration.signingCertDigests.isEmpty, registration.playIntegrityKeys == nil,
                !registration.playIntegrityGoogle
            else {
                throw DeviceAppError("--package, --signing-cert-digest and the Play Integrity keys are for android apps")
            }
            (app.teamId, app.bundleId) = (teamId, bundleId)
        case .android:
            guard registration.teamId == nil, registration.bundleId == nil else {
                throw DeviceAppError("--team-id and --bundle-id are for ios apps")
            }
            guard !registration.packages.isEmpty else { throw DeviceAppError("--package is required for android apps") }
            for package in registration.packages where !GooglePlayIntegrityDecoder.isPackageName(package) {
                throw DeviceAppError("--package '\(package)' is not an Android package name (e.g. com.example.app)")
            }
            guard !(registration.playIntegrityGoogle && registration.playIntegrityKeys != nil) else {
                throw DeviceAppError("Play Integrity tokens are decoded either with the app's keys or by Google, not both")
            }
            app.playIntegrityGoogle = registration.playIntegrityGoogle
            // Without a digest, any app sideloaded under the package name on a genuine phone would pass (review H1).
            guard registration.environment == .development || !registration.signingCertDigests.isEmpty else {
                throw DeviceAppError("a production Android app needs --signing-cert-digest (SHA-256 of its signing certificate): the package name alone is anyone's to claim")
            }
            app.packages = registration.packages
            app.signingCertDigests = try registration.signingCertDigests.map { digest throws(DeviceAppError) in
                let hex = digest.replacingOccurrences(of: ":", with: "").lowercased()
                guard hex.utf8.count == 64, HexDigit.bytes(hex) != nil else {
                    throw DeviceAppError("--signing-cert-digest '\(digest)' must be a SHA-256 digest in hex (64 digits, colons allowed)")
                }
                return hex
            }
        }
        return app
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        isUpperAlphanumeric(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    private static func isUpperAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

/// A refused app setting, naming it.
public struct DeviceAppError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of refusal: a setting at fault, an app or device that is not there, or one that is already.
    public enum Kind: Sendable, Equatable { case invalid, notFound, conflict }

    public let description: String
    public let kind: Kind
    init(_ description: String, kind: Kind = .invalid) { (self.description, self.kind) = (description, kind) }
}
