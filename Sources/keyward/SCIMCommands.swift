// `keyward scim-tokens`: the bearer tokens a company's directory (Entra ID, Okta) provisions a realm's users with.
import ArgumentParser
import Foundation
import KeywardServer

struct SCIMTokens: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scim-tokens",
        abstract: "Make, list and revoke the bearer tokens a directory uses for a realm's SCIM API.",
        discussion: """
            The directory (Microsoft Entra ID, Okta) is given the realm's SCIM base URL, <publicURL>/scim/v2/realms/<realm>, \
            and a token made here. Only the token's SHA-256 is stored: it is printed once and cannot be shown again. \
            A token reaches only its own realm's users. It is a bearer token: whoever holds it can create, change and \
            disable the realm's users (docs/SECURITY.md); revoke it when the directory is disconnected.
            """,
        subcommands: [Create.self, List.self, Revoke.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a token; it is printed once.")
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Option(help: "A name to tell the token by, unique in the realm (e.g. entra-production).") var name: String

        func run() async throws {
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                let (token, secret) = try await runtime.scim.tokens.create(realm: realm, name: name)
                print("created SCIM token \(token.id) ('\(token.name)') for realm \(realm); it is shown only now:")
                print(secret)
                print("SCIM base URL: \(runtime.configuration.resolvedPublicURL)/scim/v2/realms/\(realm)")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a realm's tokens (id, name, when made); never the tokens themselves.")
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String

        func run() async throws {
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                let tokens = try await runtime.scim.tokens.tokens(realm: realm)
                if tokens.isEmpty { print("realm \(realm) has no SCIM tokens") }
                for token in tokens { print("\(token.id)\t\(token.name)\tcreated \(token.createdAt.ISO8601Format())") }
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a token by id or name: the next request with it is refused (401).")
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Argument(help: "The token's id or name (keyward scim-tokens list).") var token: String

        func run() async throws {
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                try await runtime.scim.tokens.revoke(realm: realm, idOrName: token)
                print("revoked SCIM token \(token) of realm \(realm)")
            }
        }
    }
}
