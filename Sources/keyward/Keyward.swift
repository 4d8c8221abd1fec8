// keyward's entry point: serve, migrate and the operator commands.
import ArgumentParser

@main
struct Keyward: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyward",
        abstract: "Keyward: self-hosted authentication for mobile apps (OAuth core with DPoP-bound tokens).",
        discussion: """
            Settings come from flags, then KEYWARD_* environment variables, then the JSON file named by \
            --config / KEYWARD_CONFIG. Run `keyward serve --help` for every setting.
            """,
        subcommands: [Serve.self, Migrate.self, Backup.self, Restore.self, Realms.self, Clients.self, Users.self, Keys.self, EnrollmentLink.self, PushMFA.self, Broker.self, Issuers.self, Providers.self, Apps.self, Devices.self, Attestation.self, Assertion.self, SCIMTokens.self]
    )
}
