// `keyward devices`: a person's registered devices, listed once, and removed as one thing.
import ArgumentParser
import Foundation
import KeywardServer

struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A person's devices: the registered installations they signed in on, and removing one.",
        discussion: """
            A device becomes a person's when their app signs them in with the installation's registered key as its \
            DPoP key. Removing it ends at once, on every node: tokens bound to its key, its push approvals, its app \
            sessions, the broker hand-offs for its key, and its signed requests; it is kept so its key cannot register \
            again. Operators' approve/reject of pending devices stay under `keyward apps`.
            """,
        subcommands: [List.self, Remove.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a person's devices: app, platform, attestation, push, last seen, tokens held.")
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Option(help: "The person's username.") var user: String

        func run() async throws {
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                guard let person = try await runtime.accounts.users.user(realm: realm, username: user) else {
                    throw CommandError("user '\(user)' does not exist in realm '\(realm)' (list them with `keyward users list --realm \(realm)`)")
                }
                let devices = try await runtime.devices.people.list(realm: realm, userId: person.id)
                if devices.isEmpty { print("\(user) has signed in on no registered device in realm \(realm)") }
                for entry in devices {
                    let device = entry.device
                    let state = device.removedAt.map { "removed \($0.formatted(.iso8601))" } ?? device.status.rawValue
                    let seen = device.lastSeenAt.map { $0.formatted(.iso8601) } ?? "never"
                    print([
                        device.deviceId, "app \(device.appId)", device.platform.rawValue, entry.attestation, state, "push \(entry.pushOn ? "on" : "off")",
                        "last seen \(seen)", "tokens \(entry.tokensHeld)",
                    ].joined(separator: "\t"))
                }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a device: everything it holds ends at once, and its key cannot register again.",
            discussion: "Running it again for a removed device ends again what may be left (each step is idempotent)."
        )
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Argument(help: "The app id.") var appId: String
        @Argument(help: "The device id.") var deviceId: String

        func run() async throws {
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                guard try await runtime.devices.apps.removeDevice(realm: realm, appId: appId, deviceId: deviceId) != nil else {
                    throw CommandError("no device '\(deviceId)' is registered for app '\(appId)' in realm '\(realm)' (see `keyward apps list --realm \(realm) --devices`)")
                }
                print("removed device \(deviceId) of app \(appId)")
            }
        }
    }
}
