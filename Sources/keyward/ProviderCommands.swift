// `keyward providers`: the identity providers (Google, Apple, Facebook, any OpenID Connect provider) a realm's people
// sign in with.
import ArgumentParser
import Foundation
import KeywardServer

struct Providers: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage identity providers: sign-up and sign-in with Google, Apple, Facebook or any OpenID Connect provider.",
        discussion: """
            Each provider gets a button on the realm's sign-in page and a route that starts its flow, \
            /realms/REALM/v1/auth/ALIAS. Register Keyward at the provider as a web client whose redirect URI is the \
            one `add` and `list` print. Settings are read from the database, so a change applies at once on every node.
            """,
        subcommands: [Add.self, List.self, Remove.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register an identity provider for a realm.",
            discussion: """
                --type oidc needs --issuer: Keyward reads its discovery document (ISSUER/.well-known/openid-configuration), \
                whose issuer must equal it exactly. --type google presets Google's issuer (--issuer overrides it, for \
                tests). The client secret comes from --client-secret-file or the KEYWARD_PROVIDER_SECRET variable, \
                never from the command line, and is stored sealed under the master key.

                --type apple (Sign in with Apple; --client-id is the Services ID) needs --team-id, --key-id and \
                --private-key-file (the .p8 key, stored sealed); Keyward signs its client secret with it, so give no \
                secret. Issuer https://appleid.apple.com and Apple's endpoints are preset.

                --type facebook (--client-id is the app id, the secret its app secret) presets Facebook Login's \
                dialog and Graph v19.0 endpoints; identities are filed under https://www.facebook.com.

                --authorization-endpoint, --token-endpoint, --jwks-uri (apple) and --userinfo-endpoint (facebook's \
                Graph /me) override the presets, e.g. to point them at a test double; Apple's revocation endpoint and \
                Graph's debug_token are found beside the token endpoint.
                """
        )
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Argument(help: "The provider's alias: 1-32 lower-case letters, digits or '-'; it appears in URLs.") var alias: String
        @Option(name: .customLong("type"), help: "oidc, google, apple or facebook.") var kind: String
        @Option(help: "The issuer, exactly as its id_tokens carry it (required for oidc).") var issuer: String?
        @Option(name: .customLong("client-id"), help: "The client id Keyward is registered with at the provider.") var clientId: String
        @Option(name: .customLong("client-secret-file"), help: "A file holding the client secret (or set KEYWARD_PROVIDER_SECRET).") var clientSecretFile: String?
        @Option(help: "Scopes to ask for, space separated (default \"openid email profile\").") var scopes: String?
        @Option(name: .customLong("display-name"), help: "The sign-in button's label (default: Google, Apple, Facebook, or the alias).") var displayName: String?
        @Option(name: .customLong("hosted-domain"), help: "Google: only accounts of this Workspace domain (the hd claim).") var hostedDomain: String?
        @Option(name: .customLong("username-claim"), help: "Name new users by this claim (oidc, google: preferred_username, email or nickname; apple: email; an address only when verified and --trust-verified-email is set) when it is a username no one has; otherwise, and by default, a generated one.") var usernameClaim: String?
        @Option(name: .customLong("authorization-endpoint"), help: "apple, facebook: instead of the preset authorization endpoint.") var authorizationEndpoint: String?
        @Option(name: .customLong("token-endpoint"), help: "apple, facebook: instead of the preset token endpoint.") var tokenEndpoint: String?
        @Option(name: .customLong("jwks-uri"), help: "apple: instead of the preset JWK Set URL.") var jwksURI: String?
        @Option(name: .customLong("userinfo-endpoint"), help: "facebook: instead of the preset Graph /me URL.") var userinfoEndpoint: String?
        @Option(name: .customLong("team-id"), help: "apple: the developer team id (iss of the client secret).") var teamId: String?
        @Option(name: .customLong("key-id"), help: "apple: the id of the Sign in with Apple key (kid of the client secret).") var keyId: String?
        @Option(name: .customLong("private-key-file"), help: "apple: the key's .p8 file (PEM).") var privateKeyFile: String?
        @Flag(name: .customLong("trust-verified-email"), help: "Link a new identity to an existing account with the same e-mail when this provider marks it verified. Off by default; see docs/SECURITY.md.") var trustVerifiedEmail = false

        func run() async throws {
            guard let kind = IdentityProvider.Kind(rawValue: kind) else {
                throw CommandError("--type must be oidc, google, apple or facebook, not '\(kind)'")
            }
            // Apple's secret is made from its key, so a KEYWARD_PROVIDER_SECRET meant for another provider is not read.
            let secret = kind == .apple && clientSecretFile == nil ? nil : try Providers.readSecret(file: clientSecretFile)
            let privateKey = try privateKeyFile.map { file in
                guard let data = FileManager.default.contents(atPath: file) else { throw CommandError("--private-key-file: \(file) cannot be read") }
                return String(decoding: data, as: UTF8.self)
            }
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                let registration = IdentityProviderService.Registration(
                    realm: realm, alias: alias, kind: kind, issuer: issuer, clientId: clientId, clientSecret: secret,
                    scopes: scopes.map { $0.split(separator: " ").map(String.init) }, displayName: displayName,
                    trustVerifiedEmail: trustVerifiedEmail, hostedDomain: hostedDomain, usernameClaim: usernameClaim, authorizationEndpoint: authorizationEndpoint,
                    tokenEndpoint: tokenEndpoint, jwksURI: jwksURI, userinfoEndpoint: userinfoEndpoint, appleTeamId: teamId, appleKeyId: keyId,
                    applePrivateKeyPEM: privateKey
                )
                let added: IdentityProvider
                do {
                    added = try await runtime.accounts.providers.add(registration)
                } catch let error as IdentityProviderError {
                    throw CommandError(error.description)
                }
                print("registered provider \(added.alias) (\(added.kind.rawValue)) in realm \(realm)")
                print(Providers.describe(added, publicURL: runtime.configuration.resolvedPublicURL))
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a realm's identity providers and the redirect URI each must be configured with.")
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String

        func run() async throws {
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                let providers = try await runtime.accounts.providers.list(realm: realm)
                if providers.isEmpty { print("no identity providers in realm \(realm)") }
                for provider in providers {
                    print("\(provider.alias) (\(provider.kind.rawValue))")
                    print(Providers.describe(provider, publicURL: runtime.configuration.resolvedPublicURL))
                }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove an identity provider; users keep the identities they linked through it.",
            discussion: "Its button and routes go at once. Adding it again under the same alias lets those users sign in with it again."
        )
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Argument(help: "The provider's alias.") var alias: String

        func run() async throws {
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                do {
                    try await runtime.accounts.providers.remove(realm: realm, alias: alias)
                } catch let error as IdentityProviderError {
                    throw CommandError(error.description)
                }
                print("removed provider \(alias) from realm \(realm)")
            }
        }
    }

    static func describe(_ provider: IdentityProvider, publicURL: String) -> String {
        var lines = [
            "  issuer:        \(provider.issuer)",
            "  client id:     \(provider.clientId)\(provider.sealedClientSecret != nil ? " (secret stored sealed)" : provider.appleKey != nil ? " (secret signed with the apple key)" : " (no secret)")",
            "  scopes:        \(provider.scopes.joined(separator: " "))",
            "  button:        \(provider.displayName)",
            "  redirect URI:  \(IdentityProvider.redirectURI(publicURL: publicURL, realm: provider.realm, alias: provider.alias))",
            "  e-mail links:  \(provider.trustVerifiedEmail ? "verified addresses link to existing accounts" : "never (sign in first, then link)")",
        ]
        if let domain = provider.hostedDomain { lines.append("  hosted domain: \(domain)") }
        lines.append("  new users:     \(provider.usernameClaim.map { "named by the \($0) claim when free" } ?? "generated usernames")")
        if let key = provider.appleKey { lines.append("  apple key:     team \(key.teamId), key id \(key.keyId) (key stored sealed)") }
        if let endpoints = provider.endpoints {
            lines.append("  authorize at:  \(endpoints.authorization)")
            lines.append("  token at:      \(endpoints.token)")
            if let jwks = endpoints.jwks { lines.append("  keys at:       \(jwks)") }
            if let userinfo = endpoints.userinfo { lines.append("  profile at:    \(userinfo)") }
        }
        return lines.joined(separator: "\n")
    }

    /// The secret from a file (trailing newline dropped) or KEYWARD_PROVIDER_SECRET; nil when neither is given.
    static func readSecret(file: String?) throws -> String? {
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else { throw CommandError("--client-secret-file: \(file) cannot be read") }
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
            guard !text.isEmpty else { throw CommandError("--client-secret-file: \(file) is empty") }
            return text
        }
        return ProcessInfo.processInfo.environment["KEYWARD_PROVIDER_SECRET"].flatMap { $0.isEmpty ? nil : $0 }
    }
}
