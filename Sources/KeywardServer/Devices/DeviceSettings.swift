// The device settings that name files, read once at start so a bad file stops the server.
import Foundation
import KeywardAttestation
import Logging

/// The device settings that name files, read once at start: a bad file stops the server with the setting named,
/// instead of refusing every Android registration later.
struct DeviceSettings: Sendable {
    var challengeLifetime: TimeInterval
    var limits: DeviceService.Limits
    var androidRoots: PinnedRoots
    /// Google's attestation status list, re-read when the file changes; nil when not configured.
    var androidRevocations: RevocationListFile?
    /// For apps whose Play Integrity tokens Google decodes.
    var playIntegrityAccount: GoogleServiceAccount?
    var playIntegrityURL: String
    /// Apps declared in `devices.appsFile`, checked at start and applied by `KeywardRuntime.applyDeclaredApps`.
    var declaredApps: [DeviceAppService.Registration] = []

    static let maximumFileSize = 16 << 20

    init(_ configuration: KeywardConfiguration, logger: Logger) throws(ConfigurationError) {
        challengeLifetime = TimeInterval(configuration.devicesChallengeLifetime)
        limits = DeviceService.Limits(
            pendingPerApp: configuration.devicesPendingLimit, pendingLifetime: TimeInterval(configuration.devicesPendingLifetimeDays) * 86400,
            unattestedPerHour: configuration.devicesUnattestedPerHour,
            googleDecodesPerAddressPerHour: configuration.playIntegrityGoogleCallsPerAddressPerHour,
            googleDecodesPerAppPerHour: configuration.playIntegrityGoogleCallsPerAppPerHour
        )
        androidRoots = .googleHardwareAttestation
        playIntegrityURL = configuration.playIntegrityURL
        if let path = configuration.devicesAppsFile { declaredApps = try DeviceAppsFile.load(path: path) }
        guard let url = URL(string: playIntegrityURL), ["https", "http"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
            throw ConfigurationError(setting: "devices.playIntegrity.url", problem: "\(playIntegrityURL) is not an http(s) URL")
        }
        if let path = configuration.playIntegrityServiceAccountFile {
            do throws(SettingError) {
                playIntegrityAccount = try GoogleServiceAccount.load(path: path, setting: "devices.playIntegrity.serviceAccountFile")
            } catch {
                throw ConfigurationError(setting: error.setting, problem: error.description)
            }
        }
        if let path = configuration.androidExtraRootsFile {
            let setting = "devices.android.extraRootsFile"
            let pem = String(decoding: try Self.read(path, setting: setting), as: UTF8.self)
            do throws(AttestationFailure) {
                androidRoots = androidRoots.adding(try PinnedRoots(pem: pem))
            } catch {
                throw ConfigurationError(setting: setting, problem: "\(path): \(error.detail)")
            }
        }
        if let path = configuration.androidRevocationListFile {
            androidRevocations = try RevocationListFile(path: path, logger: logger)
        }
    }

    private static func read(_ path: String, setting: String) throws(ConfigurationError) -> Data {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(setting: setting, problem: "\(path) cannot be read")
        }
        guard data.count <= maximumFileSize else { throw ConfigurationError(setting: setting, problem: "\(path) is larger than 16 MiB") }
        return data
    }
}
