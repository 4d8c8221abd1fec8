// keyward-device passkey: a software passkey authenticator on the command line, over a realm's JSON endpoints.
import ArgumentParser
import Foundation
import KeywardKit

struct Passkey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A SOFTWARE passkey authenticator, for tests and demos: its keys are a file in the state directory.",
        discussion: """
            Not a real authenticator: the P-256 keys live in <state-dir>/passkeys.json (mode 0600) and "verifying the \
            person" is a flag. A realm that requires attestation refuses it. Apps use the platform's passkeys \
            (KeywardKit's PlatformPasskeyAuthenticator).
            """,
        subcommands: [Register.self, SignIn.self]
    )

    struct Options: ParsableArguments {
        @Option(help: "Realm issuer URL, e.g. http://localhost:8080/realms/demo (browsers and Keyward refuse an IP address as an RP ID).")
        var issuer: String

        @Option(name: .customLong("state-dir"), help: "Directory holding the passkeys (mode 0700).")
        var stateDirectory = "keyward-device-state"

        @Flag(name: .customLong("no-user-verification"), help: "Report the person as not verified (UV clear).")
        var noUserVerification = false

        func client() throws -> PasskeyClient {
            let authenticator = try SoftwarePasskeyAuthenticator(
                file: URL(fileURLWithPath: stateDirectory).appendingPathComponent("passkeys.json"), userVerified: !noUserVerification
            )
            return try PasskeyClient(issuer: issuer, authenticator: authenticator)
        }
    }

    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign in with a username and password (env KEYWARD_DEVICE_PASSWORD), then add a software passkey to that account."
        )
        @OptionGroup var options: Options
        @Option(help: "The account's username.") var username: String
        @Option(help: "A name for the passkey on the account page.") var name = "keyward-device"

        func run() async throws {
            guard let password = ProcessInfo.processInfo.environment["KEYWARD_DEVICE_PASSWORD"], !password.isEmpty else {
                throw ValidationError("set KEYWARD_DEVICE_PASSWORD to the account's password (it is not taken on the command line, where others could read it)")
            }
            let client = try options.client()
            try await client.signInWithPassword(username: username, password: password)
            let passkey = try await client.register(name: name)
            print("registered passkey \(passkey.id) (\(passkey.name)) for \(username)")
        }
    }

    struct SignIn: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign-in", abstract: "Sign in with a software passkey; prints where the sign-in goes next and its amr."
        )
        @OptionGroup var options: Options
        @Option(help: "Name the account (its passkeys are asked for); without it, any passkey this authenticator holds for the realm.")
        var username: String?

        func run() async throws {
            let answer = try await options.client().signIn(username: username)
            print("signed in: next \(answer.next), amr \(answer.amr.joined(separator: " "))")
        }
    }
}
