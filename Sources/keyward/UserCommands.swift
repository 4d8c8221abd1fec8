// `keyward users`: creating, listing, disabling, enabling, re-passwording and deleting local accounts.
import ArgumentParser
import Foundation
import KeywardServer

/// `keyward users …`: local accounts. Disabling, deleting and a new password end the user's browser sessions
/// at once; each change is an audit event.
struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage local users.",
        subcommands: [Create.self, List.self, Disable.self, Enable.self, SetPassword.self, Delete.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a user; the password is read from KEYWARD_NEW_PASSWORD or stdin.")
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Argument(help: "Username.") var username: String

        func run() async throws {
            let password = try newPassword()
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                let user = try await runtime.accounts.users.createUser(realm: realm, username: username, password: password)
                print("created user \(user.username) (\(user.id)) in realm \(realm)")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a realm's users.")
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String

        func run() async throws {
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                for user in try await runtime.accounts.users.listUsers(realm: realm) {
                    print("\(user.username)\t\(user.id)\t\(user.enabled ? "enabled" : "disabled")")
                }
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable a user: no sign-in, no device API, every browser session ended now.")
        @OptionGroup var target: UserTarget

        func run() async throws {
            try await target.run { runtime in
                let user = try await runtime.accounts.users.disable(realm: target.realm, username: target.username)
                print("disabled user \(user.username) in realm \(target.realm); their browser sessions are ended")
            }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled user again (sessions ended by disabling stay ended).")
        @OptionGroup var target: UserTarget

        func run() async throws {
            try await target.run { runtime in
                let user = try await runtime.accounts.users.enable(realm: target.realm, username: target.username)
                print("enabled user \(user.username) in realm \(target.realm)")
            }
        }
    }

    struct SetPassword: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-password",
            abstract: "Set a user's password from KEYWARD_NEW_PASSWORD or stdin; their browser sessions are ended."
        )
        @OptionGroup var target: UserTarget

        func run() async throws {
            let password = try newPassword()
            try await target.run { runtime in
                let user = try await runtime.accounts.users.setPassword(realm: target.realm, username: target.username, password: password)
                print("set a new password for \(user.username) in realm \(target.realm); their browser sessions are ended")
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a user, their push devices and their browser sessions.")
        @OptionGroup var target: UserTarget

        func run() async throws {
            try await target.run { runtime in
                let (realm, username) = (target.realm, target.username)
                guard let user = try await runtime.accounts.users.user(realm: realm, username: username) else {
                    throw CommandError("user '\(username)' does not exist in realm \(realm) (list them with `keyward users list --realm \(realm)`)")
                }
                let devices = try await runtime.pushMFA.service.devices(realm: realm, userId: user.id)
                _ = try await runtime.deleteUser(realm: realm, username: username)
                print("deleted user \(user.username) from realm \(realm) with \(devices.count) push device\(devices.count == 1 ? "" : "s")")
            }
        }
    }
}

/// The user a command acts on: `--realm R USERNAME`, and the runtime to act through.
struct UserTarget: ParsableArguments {
    @OptionGroup var common: CommonOptions
    @Option(help: "Realm name.") var realm: String
    @Argument(help: "Username.") var username: String

    func run(_ body: (KeywardRuntime) async throws -> Void) async throws {
        try await withRuntime(common) { runtime in
            _ = try await requireRealm(runtime, realm)
            try await body(runtime)
        }
    }
}

/// A new password, never from the command line: it would land in shell history and `ps`.
private func newPassword() throws -> String {
    let password = ProcessInfo.processInfo.environment["KEYWARD_NEW_PASSWORD"] ?? readLine(strippingNewline: true)
    guard let password, !password.isEmpty else { throw CommandError("no password: set KEYWARD_NEW_PASSWORD or pipe it on stdin") }
    return password
}
