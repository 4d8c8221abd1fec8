// `keyward apps`: the mobile apps whose installations register device keys in a realm.
import ArgumentParser
import Foundation
import KeywardServer

extension DeviceApp.Platform: ExpressibleByArgument {}
extension DeviceApp.Environment: ExpressibleByArgument {}
extension DeviceApp.AttestationPolicy: ExpressibleByArgument {}

struct Apps: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage device apps: the iOS and Android apps whose installations register hardware-backed keys.",
        discussion: """
            An installation asks POST /realms/{realm}/v1/device/challenge for a challenge, then registers its key \
            with POST /realms/{realm}/v1/device/register, proving possession and sending its platform's \
            attestation (App Attest, Android Key Attestation or Play Integrity), judged by the app's settings here.
            """,
        subcommands: [Add.self, List.self, Approve.self, Reject.self, Remove.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register an app with what its attestations must show.",
            discussion: """
                iOS: --team-id and --bundle-id (App Attest's rpIdHash is SHA-256 of TEAMID.bundle.id); \
                --environment picks the App Attest environment accepted (development: Xcode builds; production: \
                TestFlight and App Store), never both. Android: one or more --package and --signing-cert-digest \
                (SHA-256 of the signing certificate, hex). --missing-attestation / --failed-attestation say what \
                a registration without a usable attestation becomes: reject (refused, the default), pending (stored, \
                not trusted until an operator decides) or accept (stored as registered, the summary saying what \
                was missing). --dev-bypass lets development traffic (X-Keyward-Dev-Mode: true) register without \
                attestation; it is refused for production apps, where that header is refused and audited.
                """
        )
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Argument(help: "The app id installations send as app_id.") var appId: String
        @Option(help: "ios or android.") var platform: DeviceApp.Platform
        @Option(help: "development or production.") var environment: DeviceApp.Environment
        @Option(name: .customLong("team-id"), help: "iOS: the Apple team id.") var teamId: String?
        @Option(name: .customLong("bundle-id"), help: "iOS: the bundle identifier.") var bundleId: String?
        @Option(name: .customLong("package"), help: "Android: a package name; repeat for several.") var packages: [String] = []
        @Option(name: .customLong("signing-cert-digest"), help: "Android: SHA-256 of a signing certificate, hex; repeat for several.")
        var digests: [String] = []
        @Option(name: .customLong("missing-attestation"), help: "reject, pending or accept (default reject).")
        var missingAttestation: DeviceApp.AttestationPolicy = .reject
        @Option(name: .customLong("failed-attestation"), help: "reject, pending or accept (default reject).")
        var failedAttestation: DeviceApp.AttestationPolicy = .reject
        @Flag(name: .customLong("dev-bypass"), help: "Let development traffic register without attestation (development apps only).")
        var devBypass = false
        @Option(name: .customLong("play-integrity-decryption-key-file"), help: "Android: the Play Integrity response decryption key (base64, from Play Console).")
        var playIntegrityDecryptionKeyFile: String?
        @Option(name: .customLong("play-integrity-verification-key-file"), help: "Android: the Play Integrity response verification key (base64, from Play Console).")
        var playIntegrityVerificationKeyFile: String?
        @Flag(name: .customLong("play-integrity-google"), help: "Android: have Google decode Play Integrity tokens (decodeIntegrityToken; the server needs devices.playIntegrity.serviceAccountFile).")
        var playIntegrityGoogle = false

        func run() async throws {
            let playIntegrityKeys = try readPlayIntegrityKeys()
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                let registration = DeviceAppService.Registration(
                    realm: realm, appId: appId, platform: platform, environment: environment, teamId: teamId, bundleId: bundleId,
                    packages: packages, signingCertDigests: digests, missingAttestation: missingAttestation,
                    failedAttestation: failedAttestation, devBypass: devBypass, playIntegrityKeys: playIntegrityKeys,
                    playIntegrityGoogle: playIntegrityGoogle
                )
                let app: DeviceApp
                do {
                    app = try await runtime.devices.apps.add(registration)
                } catch let error as DeviceAppError {
                    throw CommandError(error.description)
                }
                print("registered app \(app.appId) in realm \(realm)")
                print(Apps.describe(app))
            }
        }

        /// Both key files or neither; their contents are checked as keys before anything is stored.
        private func readPlayIntegrityKeys() throws -> PlayIntegrityKeys? {
            do {
                return try PlayIntegrityKeys.read(
                    decryption: playIntegrityDecryptionKeyFile.map { ($0, "--play-integrity-decryption-key-file") },
                    verification: playIntegrityVerificationKeyFile.map { ($0, "--play-integrity-verification-key-file") }
                )
            } catch {
                throw CommandError(error.description)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a realm's device apps and how many devices each has.")
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Flag(help: "Also list each app's devices.") var devices = false

        func run() async throws {
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                let apps = try await runtime.devices.apps.list(realm: realm)
                if apps.isEmpty { print("realm \(realm) has no device apps") }
                for app in apps {
                    let registered = try await runtime.devices.apps.devices(realm: realm, appId: app.appId)
                    print(app.appId)
                    print(Apps.describe(app))
                    print("  devices: \(registered.count)")
                    if devices {
                        for device in registered {
                            print("    \(device.deviceId)\t\(device.status.rawValue)\tregistered \(device.registeredAt.formatted(.iso8601))\t\(device.attestation)")
                        }
                    }
                }
            }
        }
    }

    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Approve a pending device: its signed requests are accepted from its next one.",
            discussion: "Devices wait as pending when their app's policy says so for a missing or failed attestation (see `apps list --devices`)."
        )
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Argument(help: "The app id.") var appId: String
        @Argument(help: "The device id.") var deviceId: String

        func run() async throws {
            try await Apps.decide(common, realm: realm, appId: appId, deviceId: deviceId, status: .registered)
            print("approved device \(deviceId) of app \(appId)")
        }
    }

    struct Reject: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Reject a device: its signed requests are refused (DEVICE_REVOKED), and its key cannot register again."
        )
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Argument(help: "The app id.") var appId: String
        @Argument(help: "The device id.") var deviceId: String

        func run() async throws {
            try await Apps.decide(common, realm: realm, appId: appId, deviceId: deviceId, status: .rejected)
            print("rejected device \(deviceId) of app \(appId)")
        }
    }

    static func decide(_ common: CommonOptions, realm: String, appId: String, deviceId: String, status: Device.Status) async throws {
        try await withRuntime(common) { runtime in
            _ = try await requireRealm(runtime, realm)
            do {
                try await runtime.devices.apps.decide(realm: realm, appId: appId, deviceId: deviceId, status: status)
            } catch let error as DeviceAppError {
                throw CommandError(error.description)
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove an app and every device registered for it; their signed requests are refused at once."
        )
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Argument(help: "The app id.") var appId: String

        func run() async throws {
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                do {
                    try await runtime.devices.apps.remove(realm: realm, appId: appId)
                } catch let error as DeviceAppError {
                    throw CommandError(error.description)
                }
                print("removed app \(appId) and its devices from realm \(realm)")
            }
        }
    }

    static func describe(_ app: DeviceApp) -> String {
        var lines = ["  platform: \(app.platform.rawValue), environment: \(app.environment.rawValue)"]
        switch app.platform {
        case .ios: lines.append("  App ID: \(app.appleAppId ?? "?")")
        case .android:
            lines.append("  packages: \(app.packages.joined(separator: ", "))")
            lines.append("  signing certificate digests: \(app.signingCertDigests.isEmpty ? "not checked" : app.signingCertDigests.joined(separator: ", "))")
        }
        lines.append("  missing attestation: \(app.missingAttestation.rawValue), failed attestation: \(app.failedAttestation.rawValue)")
        if app.platform == .android {
            let playIntegrity = app.playIntegrityGoogle ? "decoded by Google" : app.sealedPlayIntegrityKeys == nil ? "no keys (tokens refused)" : "keys stored (sealed)"
            lines.append("  Play Integrity: \(playIntegrity)")
        }
        lines.append("  development bypass: \(app.devBypass ? "allowed" : "refused")")
        return lines.joined(separator: "\n")
    }
}
