// One device, one key (issue 32): the registered installation behind a key, as the parts that meet the key see it —
// the token endpoint binding a person's tokens to it, push approvals, the gates.
import Foundation
import KeywardJOSE
import Synchronization

/// How far a device's attestation vouches for it, weakest first.
public enum DeviceAttestationLevel: String, Sendable, CaseIterable, Comparable {
    /// Nothing verified: no attestation, a failed or unreadable one, or the development bypass.
    case none
    /// A verified attestation vouches for the app installation (App Attest, Play Integrity, or a key attestation
    /// made in software), which holds the key.
    case appAttested = "app-attested"
    /// Android Key Attestation certified the key itself as kept in hardware (the TEE or StrongBox).
    case hardwareKey = "hardware-key"

    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// A registered installation, found by its key's RFC 7638 thumbprint.
struct RegisteredDeviceKey: Sendable, Equatable {
    let realm: String
    let appId: String
    let deviceId: String
    /// RFC 7638 thumbprint of the device's key (the `jkt` of tokens bound to it).
    let keyThumbprint: String
    /// `ios` or `android`.
    let platform: String
    /// The attestation's kind: `app-attest`, `android-key`, `play-integrity` or `none`.
    let attestation: String
    let level: DeviceAttestationLevel
    /// Where the hardware keeps the key, when a key attestation said so: `StrongBox` or `TEE`.
    var keyStorage: String? = nil
    /// Signed requests and tokens are accepted: registered, not pending, rejected or removed, and the key is still the
    /// device's (not one it rotated away from).
    let usable: Bool
    /// The person who last signed in on it, if anyone did.
    var userId: String? = nil

    /// What vouched for the device, in words for the pages: "App Attest verified", "StrongBox key".
    var attestationWords: String {
        if let keyStorage, level == .hardwareKey { return "\(keyStorage) key" }
        switch attestation {
        case "app-attest": return level == .none ? "App Attest not verified" : "App Attest verified"
        case "play-integrity": return level == .none ? "Play Integrity not verified" : "Play Integrity verified"
        case "android-key": return level == .none ? "key attestation not verified" : "software key"
        default: return "not attested"
        }
    }

    /// The claims a token bound to this key carries: which registered device holds it, and what vouched for it.
    var claims: JSONObject {
        ["device_id": .string(deviceId), "device_app": .string(appId), "device_attestation": .string(attestation), "device_level": .string(level.rawValue)]
    }
}

/// The registered devices, as the Devices part answers for them. The token endpoint and the gates name no part.
protocol DeviceKeyDirectory: Sendable {
    /// The device of `realm` whose key has thumbprint `jkt`, if one is registered (usable or not).
    func device(realm: String, jkt: String) async throws -> RegisteredDeviceKey?
    /// `userId` got tokens bound to the device's key: the device is the person's, seen `at`.
    func signedIn(_ device: RegisteredDeviceKey, userId: String, at: Date) async throws
}

/// What another part ends when a registered device is removed or rejected: the push approvals made on it, the
/// refresh tokens bound to its key, the hand-offs waiting for its key. The device is refused everywhere already
/// (every check reads it); the steps take away what would otherwise linger.
protocol DeviceRemovalStep: Sendable {
    func removed(_ device: RegisteredDeviceKey, at: Date) async throws
}

/// What another part carries to a registered device's new key when the device rotates it (through the Devices flow,
/// signed by the old key with a proof by the new one): push approvals on it, app sessions bound to it. Until a part's
/// step has run, what it holds stays on the old key, which nothing accepts any more: a failed step costs a new
/// sign-in or enabling, never access.
protocol DeviceKeyRotationStep: Sendable {
    /// `device` as it is now (its new `keyThumbprint`), `previousThumbprint` its old key's, `publicKey` the new key.
    func rotated(_ device: RegisteredDeviceKey, previousThumbprint: String, publicKey: JWK, at: Date) async throws
}

/// What a part holds for a person's registered device, for the one list of their devices (the account page, `keyward
/// devices list`).
struct DeviceHoldings: Sendable, Equatable {
    /// Push approvals are on for the person on the device's key.
    var pushOn = false
    /// Live app sessions (refresh-token families) bound to the device's key.
    var tokensHeld = 0

    static func + (lhs: Self, rhs: Self) -> Self {
        DeviceHoldings(pushOn: lhs.pushOn || rhs.pushOn, tokensHeld: lhs.tokensHeld + rhs.tokensHeld)
    }
}

/// A part that holds something for registered devices says what, for one person's device.
protocol DeviceHoldingsReporter: Sendable {
    func holdings(of device: RegisteredDeviceKey, userId: String) async throws -> DeviceHoldings
}

/// Where the Devices part plugs its directory in while the parts are assembled (none: no key is a device's), and
/// where other parts add what they end with a device.
final class DeviceKeys: Sendable {
    private let directory = Mutex<(any DeviceKeyDirectory)?>(nil)
    private let steps = Mutex<[any DeviceRemovalStep]>([])
    private let rotationSteps = Mutex<[any DeviceKeyRotationStep]>([])
    private let reporters = Mutex<[any DeviceHoldingsReporter]>([])

    func add(holdingsReporter: any DeviceHoldingsReporter) { reporters.withLock { $0.append(holdingsReporter) } }

    /// What every part holds for `device` of `userId`.
    func holdings(of device: RegisteredDeviceKey, userId: String) async throws -> DeviceHoldings {
        var total = DeviceHoldings()
        for reporter in reporters.withLock({ $0 }) { total = total + (try await reporter.holdings(of: device, userId: userId)) }
        return total
    }

    func add(removalStep: any DeviceRemovalStep) { steps.withLock { $0.append(removalStep) } }
    func add(rotationStep: any DeviceKeyRotationStep) { rotationSteps.withLock { $0.append(rotationStep) } }

    /// Runs every part's rotation step; each failure is handed to `failed` (the rotation stands either way).
    func runRotationSteps(
        _ device: RegisteredDeviceKey, previousThumbprint: String, publicKey: JWK, at: Date, failed: (any Error) -> Void
    ) async {
        for step in rotationSteps.withLock({ $0 }) {
            do {
                try await step.rotated(device, previousThumbprint: previousThumbprint, publicKey: publicKey, at: at)
            } catch {
                failed(error)
            }
        }
    }

    /// Runs every part's step for `device`, in the order they were added; the first failure is thrown after all ran
    /// (a removal run again runs them again: each is idempotent).
    func runRemovalSteps(_ device: RegisteredDeviceKey, at: Date) async throws {
        try await runEach(steps.withLock { $0 }) { try await $0.removed(device, at: at) }
    }

    func plug(_ plugged: any DeviceKeyDirectory) {
        directory.withLock {
            precondition($0 == nil, "a device key directory is plugged in already")
            $0 = plugged
        }
    }

    func device(realm: String, jkt: String) async throws -> RegisteredDeviceKey? {
        guard let plugged = directory.withLock({ $0 }) else { return nil }
        return try await plugged.device(realm: realm, jkt: jkt)
    }

    func signedIn(_ device: RegisteredDeviceKey, userId: String, at: Date) async throws {
        try await directory.withLock({ $0 })?.signedIn(device, userId: userId, at: at)
    }
}
