// Persistence of device apps and registered devices, compare-and-set updates included.
import Foundation

/// Persistence of device apps and devices. One implementation (SQL) serves both engines.
public protocol DeviceStore: Sendable {
    func createApp(_ app: DeviceApp) async throws
    /// Replaces an app's settings (its devices stay). Returns false when there is no such app.
    func updateApp(_ app: DeviceApp) async throws -> Bool
    func app(realm: String, appId: String) async throws -> DeviceApp?
    func listApps(realm: String) async throws -> [DeviceApp]
    /// Removes the app and every device registered for it. Returns false when there was no such app.
    func removeApp(realm: String, appId: String) async throws -> Bool

    /// Stores a new device. `StoreError.conflict` when its id or its key is registered already for the app.
    func createDevice(_ device: Device) async throws
    func device(realm: String, appId: String, deviceId: String) async throws -> Device?
    func device(realm: String, appId: String, keyThumbprint: String) async throws -> Device?
    func listDevices(realm: String, appId: String) async throws -> [Device]
    /// One page of an app's devices in device id order, after the device `after` names.
    func devices(realm: String, appId: String, after: String?, limit: Int) async throws -> [Device]
    /// What the realm knows of a key, read in one statement (the token endpoint asks for every person's token): the
    /// devices registered with it, in app order (one key registers once per app), and the device that rotated away
    /// from it, if it is a retired key.
    func keyHolders(realm: String, keyThumbprint: String) async throws -> DeviceKeyHolders
    /// Marks the device removed `at` (kept, so its key cannot register again), once: a removed device keeps its first
    /// removal time. `userId`: only if it is that person's device. Returns the device as stored, nil when there is
    /// none (or it is not that person's).
    func markRemoved(realm: String, appId: String, deviceId: String, userId: String?, at: Date) async throws -> Device?
    /// The devices `userId` signed in on, newest seen first.
    func devices(realm: String, userId: String) async throws -> [Device]
    /// `userId` got tokens bound to the device's key `at`: the device is theirs, last seen then.
    func recordSignIn(realm: String, appId: String, deviceId: String, userId: String, at: Date) async throws

    /// Sets a device's status (an operator's decision). Returns false when there is no such device.
    func setStatus(realm: String, appId: String, deviceId: String, to status: Device.Status) async throws -> Bool

    /// How many of the app's devices wait for an operator's decision, counting no further than `limit`.
    func countPendingDevices(realm: String, appId: String, upTo limit: Int) async throws -> Int
    /// How many devices of the app no verified attestation vouched for were registered since `registeredSince`,
    /// counting no further than `limit`.
    func countUnattestedDevices(realm: String, appId: String, registeredSince: Date, upTo limit: Int) async throws -> Int
    /// Deletes the pending devices (of every app) registered before `cutoff`; returns how many.
    func deletePendingDevices(registeredBefore cutoff: Date) async throws -> Int

    /// Stores `counter` as the device's App Attest assertion counter if it is greater than the stored one, in one
    /// statement (compare-and-set: of two assertions racing with one counter, one wins). Returns whether it did.
    func advanceAssertionCounter(realm: String, appId: String, deviceId: String, to counter: Int64) async throws -> Bool

    /// Replaces the device's key, if it still is `previousThumbprint` (compare-and-set against a concurrent rotation),
    /// and remembers the old key as retired.
    /// `StoreError.conflict` when the new key is registered already for the app.
    func replaceKey(
        realm: String, appId: String, deviceId: String, previousThumbprint: String, publicKey: [UInt8], thumbprint: String, attestation: String,
        at: Date
    ) async throws -> Bool
}

/// The devices behind a key (``DeviceStore/keyHolders(realm:keyThumbprint:)``).
public struct DeviceKeyHolders: Sendable {
    /// The devices registered with the key now, in app order.
    public var devices: [Device]
    /// The device a retired key (one a device rotated away from) belonged to: its app and id, with its platform and
    /// person while its row is there.
    public var retiredFrom: (appId: String, deviceId: String, platform: String?, userId: String?)?
}
