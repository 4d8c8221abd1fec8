// Where an app installation keeps what it holds besides its key: the registration, the sign-in and the push state.
import Foundation
import KeywardWire

/// Where an ``AppInstallation`` keeps its registration states (as a ``DeviceRegistrationStore``), the person's
/// sign-in and the push-approval state. Every save replaces the whole item at once. On Apple platforms keep the
/// sign-in's tokens in the Keychain; ``FileInstallationStore`` is the store for Linux and `keyward-device`.
public protocol InstallationStore: DeviceRegistrationStore {
    /// The kept sign-in, or nil when no one is signed in.
    func signIn() throws -> SignInTokens?
    /// Keeps `tokens` as the sign-in of `installation`'s app; nil forgets it.
    func saveSignIn(_ tokens: SignInTokens?, installation: AppInstallation.Configuration) throws
    /// The state of push approvals on this installation, or nil when they are off.
    func pushState() throws -> DeviceState?
    /// Keeps `state` as the push-approval state; nil forgets it.
    func savePushState(_ state: DeviceState?) throws
}

/// An installation in one directory, in the files `keyward-device` reads: `registration-<app id>.json`,
/// `signin.json` and `device.json`, each mode 0600 in a 0700 directory and written atomically. One installation
/// (one person's sign-in, one push state) per directory.
public struct FileInstallationStore: InstallationStore {
    public let directory: URL
    private var registrations: FileDeviceRegistrationStore { FileDeviceRegistrationStore(directory: directory) }
    private var signIns: FileSignInStore { FileSignInStore(directory: directory) }

    /// A store in `directory`, created (mode 0700) at the first save.
    public init(directory: URL) { self.directory = directory }

    public func state(appId: String) throws -> DeviceRegistrationState? { try registrations.state(appId: appId) }

    public func save(_ state: DeviceRegistrationState) throws { try registrations.save(state) }

    public func signIn() throws -> SignInTokens? { try signIns.load()?.tokens }

    public func saveSignIn(_ tokens: SignInTokens?, installation: AppInstallation.Configuration) throws {
        guard let tokens else { return try signIns.remove() }
        try signIns.save(FileSignInStore.Saved(configuration: installation.signIn, tokens: tokens, appId: installation.appId))
    }

    public func pushState() throws -> DeviceState? {
        do {
            return try DeviceState.load(from: directory)
        } catch let error as KeywardKitError {
            throw error
        } catch {
            throw KeywardKitError.corruptStateFile(directory.appendingPathComponent("device.json").path)
        }
    }

    public func savePushState(_ state: DeviceState?) throws {
        guard let state else {
            let file = directory.appendingPathComponent("device.json")
            if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
            return
        }
        try state.save(to: directory)
    }
}
