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

    /// The `devices.*` settings as configured: values, and the files still to read.
    struct Declared: Sendable {
        /// `devices.challengeLifetime`, seconds.
        var challengeLifetime = 90
        /// `devices.pendingLimit`, `devices.pendingLifetimeDays`, `devices.unattestedPerHour`,
        /// `devices.playIntegrity.googleCallsPerAddressPerHour` / `…PerAppPerHour`.
        var limits = DeviceService.Limits.default
        /// `devices.playIntegrity.url`.
        var playIntegrityURL = "https://playintegrity.googleapis.com"
        /// `devices.appsFile`, `devices.playIntegrity.serviceAccountFile`, `devices.android.extraRootsFile`,
        /// `devices.android.revocationListFile`.
        var appsFile: String?
        var playIntegrityServiceAccountFile: String?
        var androidExtraRootsFile: String?
        var androidRevocationListFile: String?
    }

    init(_ declared: Declared, logger: Logger) throws(ConfigurationError) {
        challengeLifetime = TimeInterval(declared.challengeLifetime)
        limits = declared.limits
        androidRoots = .googleHardwareAttestation
        playIntegrityURL = declared.playIntegrityURL
        if let path = declared.appsFile { declaredApps = try DeviceAppsFile.load(path: path) }
        guard let url = URL(string: playIntegrityURL), ["https", "http"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
            throw ConfigurationError(setting: "devices.playIntegrity.url", problem: "\(playIntegrityURL) is not an http(s) URL")
        }
        if let path = declared.playIntegrityServiceAccountFile {
            do throws(SettingError) {
                playIntegrityAccount = try GoogleServiceAccount.load(path: path, setting: "devices.playIntegrity.serviceAccountFile")
            } catch {
                throw ConfigurationError(setting: error.setting, problem: error.description)
            }
        }
        if let path = declared.androidExtraRootsFile {
            let setting = "devices.android.extraRootsFile"
            let pem = String(decoding: try Self.read(path, setting: setting), as: UTF8.self)
            do throws(AttestationFailure) {
                androidRoots = androidRoots.adding(try PinnedRoots(pem: pem))
            } catch {
                throw ConfigurationError(setting: setting, problem: "\(path): \(error.detail)")
            }
        }
        if let path = declared.androidRevocationListFile {
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
