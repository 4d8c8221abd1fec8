import Foundation

/// Persistence of device apps and devices. One implementation (SQL) serves both engines.
public protocol DeviceStore: Sendable {
    func createApp(_ app: DeviceApp) async throws
    func app(realm: String, appId: String) async throws -> DeviceApp?
    func listApps(realm: String) async throws -> [DeviceApp]
    /// Removes the app and every device registered for it. Returns false when there was no such app.
    func removeApp(realm: String, appId: String) async throws -> Bool

    /// Stores a new device. `StoreError.conflict` when its id or its key is registered already for the app.
    func createDevice(_ device: Device) async throws
    func device(realm: String, appId: String, deviceId: String) async throws -> Device?
    func device(realm: String, appId: String, keyThumbprint: String) async throws -> Device?
    func listDevices(realm: String, appId: String) async throws -> [Device]
}
