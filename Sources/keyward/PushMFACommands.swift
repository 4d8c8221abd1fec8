// keyward enrollment-link and push-mfa settings: the operator's push-MFA commands.
import ArgumentParser
import Foundation
import KeywardServer

struct EnrollmentLink: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enrollment-link",
        abstract: "Print a fresh push-MFA enrollment link for a user (the same link the enrollment page shows as a QR code).",
        discussion: "The link is valid for the realm's enrollmentChallengeTtlSeconds (240 s by default). Treat it as a secret: whoever enrolls with it first gets the user's push approvals."
    )
    @OptionGroup var common: CommonOptions
    @Option(help: "Realm name.") var realm: String
    @Option(help: "Username of the account to enroll a phone for.") var username: String

    func run() async throws {
        try await withRuntime(common) { runtime in
            _ = try await requireRealm(runtime, realm)
            guard let user = try await runtime.accounts.users.user(realm: realm, username: username) else {
                throw CommandError("user '\(username)' does not exist in realm '\(realm)' (list them with `keyward users list --realm \(realm)`)")
            }
            let start: EnrollmentStart
            do {
                start = try await runtime.pushMFA.service.startEnrollment(realm: realm, user: user)
            } catch let error as PushMFAError {
                throw CommandError("cannot start enrollment: \(error.message)")
            }
            print(start.link)
            FileHandle.standardError.write(Data("enrollment \(start.challenge.id) for \(username) expires at \(ISO8601DateFormatter().string(from: start.challenge.expiresAt))\n".utf8))
        }
    }
}

struct PushMFA: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-mfa", abstract: "Push-MFA administration.", subcommands: [Settings.self, Devices.self, Audit.self]
    )

    struct Settings: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a realm's push-MFA settings, or change some with KEY=VALUE arguments.",
            discussion: "Keys: \(PushMFASettings.keys.joined(separator: ", ")). Example: keyward push-mfa settings --realm demo userVerification=number-match"
        )
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Argument(help: "Settings to change, as KEY=VALUE.") var assignments: [String] = []

        func run() async throws {
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                var settings = try await runtime.pushMFA.service.settings(realm: realm)
                for (key, value) in try keyValuePairs(assignments) {
                    do {
                        try settings.apply(key, value)
                    } catch let error as PushMFASettingsError {
                        throw CommandError(error.description)
                    }
                }
                if !assignments.isEmpty { try await runtime.pushMFA.service.saveSettings(settings, realm: realm) }
                for (key, value) in settings.jsonObject.sorted(by: { $0.key < $1.key }) {
                    print("\(key)=\(value.stringValue ?? value.numberValue.map { String(Int($0)) } ?? value.boolValue.map { String($0) } ?? "")")
                }
            }
        }
    }

    struct Devices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a user's enrolled push-MFA devices.")
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Option(help: "Username.") var username: String

        func run() async throws {
            try await withRuntime(common) { runtime in
                guard let user = try await runtime.accounts.users.user(realm: realm, username: username) else {
                    throw CommandError("user '\(username)' does not exist in realm '\(realm)'")
                }
                let formatter = ISO8601DateFormatter()
                for device in try await runtime.pushMFA.service.devices(realm: realm, userId: user.id) {
                    print([device.deviceLabel, device.deviceType, device.deviceId, device.credentialId, device.effectivePushProviderType,
                           "created=\(formatter.string(from: device.createdAt))", "lastUsed=\(device.lastUsedAt.map(formatter.string(from:)) ?? "never")"].joined(separator: "\t"))
                }
            }
        }
    }

    struct Audit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a realm's newest audit events.")
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Option(help: "How many events.") var limit = 50

        func run() async throws {
            try await withRuntime(common) { runtime in
                let formatter = ISO8601DateFormatter()
                for event in try await runtime.audit.events(realm: realm, limit: limit) {
                    print([formatter.string(from: event.createdAt), event.type.rawValue, event.userId ?? "-", event.clientId ?? "-", event.detailsJSON].joined(separator: "\t"))
                }
            }
        }
    }
}
