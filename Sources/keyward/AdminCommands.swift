// keyward realms, clients and keys: the operator's commands for the OAuth core.
import ArgumentParser
import Foundation
import KeywardServer

struct Realms: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create, list and update realms.", subcommands: [Create.self, List.self, Update.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a realm with a fresh signing key.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "Realm name (a-z, 0-9, '-', '_').") var name: String
        @Option(help: "Signing algorithm: ES256 (default), ES384, ES512, RS256, PS256, EdDSA.") var algorithm = "ES256"
        @Option(name: .customLong("token-lifetime"), help: "Access token lifetime in seconds.") var tokenLifetime = 300

        func run() async throws {
            try await withRuntime(common) { runtime in
                let realm = try await runtime.oauth.realms.createRealm(name: name, signingAlgorithm: algorithm, accessTokenLifetime: tokenLifetime)
                print("created realm \(realm.name) (\(realm.signingAlgorithm), tokens live \(realm.accessTokenLifetime) s), issuer \(runtime.oauth.realms.issuer(of: realm.name))")
            }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a realm's passkey settings, or change them.",
            discussion: """
                Passkeys are off until a realm turns them on. The RP ID defaults to the host of publicURL and the allowed \
                origins to publicURL's origin; add an Android app's origin (android:apk-key-hash:<base64url SHA-256 of its \
                signing certificate>) or a related origin with --webauthn-origin, once per origin (the list given replaces \
                the one stored). Nodes read a change within 5 seconds. Example: keyward realms update demo --passkeys optional
                """
        )
        @OptionGroup var common: CommonOptions
        @Argument(help: "Realm name.") var name: String
        @Option(help: "off, optional (offered beside the password) or preferred (offered first).") var passkeys: String?
        @Option(name: .customLong("webauthn-rp-id"), help: "The relying party id: a domain the public URL's host is, or ends with; 'default' for that host.")
        var rpID: String?
        @Option(name: .customLong("webauthn-origin"), help: "An origin accepted beside publicURL's (repeat for several).") var origins: [String] = []
        @Flag(name: .customLong("no-webauthn-origins"), help: "Accept publicURL's origin only.") var noOrigins = false
        @Option(name: .customLong("webauthn-user-verification"), help: "required (default) or preferred, for a passkey used as a second step.")
        var userVerification: String?
        @Option(name: .customLong("passkey-second-step"), help: "off (default): a passkey with user verification signs in alone; on: the realm's second factor (push approval) follows, as after a password.")
        var secondStep: String?
        @Option(name: .customLong("webauthn-attestation"), help: "none (default) or direct: new passkeys must prove their maker (apple, or packed to --webauthn-attestation-roots).")
        var attestation: String?
        @Option(name: .customLong("webauthn-attestation-roots"), help: "A PEM file of roots trusted for packed attestation.") var attestationRoots: String?

        func run() async throws {
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, name)
                var settings = try await runtime.passkeys.settings.settings(realm: name)
                var changes: [(String, String)] = []
                if let passkeys { changes.append(("passkeys", passkeys)) }
                if let rpID, rpID != "default" { changes.append(("webauthn-rp-id", rpID)) }
                if let userVerification { changes.append(("webauthn-user-verification", userVerification)) }
                if let secondStep { changes.append(("passkey-second-step", secondStep)) }
                if let attestation { changes.append(("webauthn-attestation", attestation)) }
                if let attestationRoots {
                    guard let pem = try? String(contentsOfFile: attestationRoots, encoding: .utf8) else {
                        throw CommandError("--webauthn-attestation-roots: cannot read \(attestationRoots)")
                    }
                    changes.append(("webauthn-attestation-roots", pem))
                }
                if noOrigins || !origins.isEmpty { settings.extraOrigins = [] }
                changes += origins.map { ("webauthn-origin", $0) }
                if rpID == "default" { settings.rpID = nil }
                for (key, value) in changes {
                    do throws(PasskeySettingsError) {
                        try settings.apply(key, value)
                    } catch {
                        throw CommandError(error.description)
                    }
                }
                let changed = !changes.isEmpty || noOrigins || rpID == "default"
                if changed { try await runtime.passkeys.settings.save(settings, realm: name) }
                let publicURL = runtime.configuration.resolvedPublicURL
                print("passkeys=\(settings.mode.rawValue)")
                print("webauthn-rp-id=\(settings.rpID ?? "\(URLComponents(string: publicURL)?.host ?? "?") (the host of publicURL)")")
                print("webauthn-origins=\(([PasskeySettings.origin(of: publicURL)] + settings.extraOrigins).joined(separator: " "))")
                print("webauthn-user-verification=\(settings.userVerification.rawValue)")
                print("passkey-second-step=\(settings.secondStep ? "on" : "off")")
                print("webauthn-attestation=\(settings.attestation.rawValue)\(settings.attestationRootsPEM == nil ? "" : " (packed roots set)")")
                if settings.mode != .off, let problem = settings.rpIDProblem(publicURL: publicURL) {
                    FileHandle.standardError.write(Data("warning: \(problem)\n".utf8))
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List realms.")
        @OptionGroup var common: CommonOptions

        func run() async throws {
            try await withRuntime(common) { runtime in
                for realm in try await runtime.oauth.realms.listRealms() {
                    print("\(realm.name)\t\(realm.signingAlgorithm)\ttoken-lifetime=\(realm.accessTokenLifetime)s\(realm.demo ? "\tdemo" : "")")
                }
            }
        }
    }
}

struct Clients: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Manage OAuth clients (confidential, or public for apps).", subcommands: [Create.self, List.self, Delete.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a client; a confidential client's secret is printed once.",
            discussion: """
                A public client (--public) has no secret: an app names itself by client_id on the jwt-bearer grant, whose host token proves the caller. It cannot use client_credentials.

                Redirect URIs are compared byte for byte (RFC 9700 §4.1.3): a claimed https URL, a private-use scheme in reverse-DNS form (com.example.app:/callback) or a loopback URL on http://127.0.0.1 or http://[::1], whose port the app may choose at each request (RFC 8252 §7.3). No fragments, no http off the loopback, no localhost.
                """
        )
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Argument(help: "Client id.") var clientId: String
        @Option(help: "Scopes granted (space separated).") var scope = ""
        @Flag(name: .customLong("allow-bearer"), help: "Do not require DPoP-bound tokens for this client.") var allowBearer = false
        @Flag(name: .customLong("public"), help: "A public client without a secret (a mobile app exchanging host tokens).") var isPublic = false
        @Option(name: .customLong("redirect-uri"), help: "A redirect URI the authorization endpoint may send the person back to (repeat for several).")
        var redirectURIs: [String] = []
        @Option(name: .customLong("post-logout-redirect-uri"), help: "Where logout may send the person back (repeat for several).")
        var postLogoutRedirectURIs: [String] = []
        @Flag(name: .customLong("first-party"), help: "The realm's own app: the person is not asked to consent at the authorization endpoint.") var firstParty = false
        @Flag(name: .customLong("require-par"), help: "Accept authorization requests only as pushed requests (RFC 9126).") var requirePAR = false
        @Flag(
            name: .customLong("broker"),
            help: "May use the broker: with --public, the app's relay returns to one of its --redirect-uri addresses; a confidential client may store hand-offs."
        ) var broker = false
        @Option(
            name: .customLong("admin-scope"),
            help: """
                Admin API scopes this confidential client's client_credentials tokens may carry, comma-separated:                 \(AdminScope.allCases.map(\.rawValue).joined(separator: ",")); 'read' for every :read one, 'all' for every one.                 A client of the master realm may use them on every realm.
                """
        ) var adminScopes: String?

        func run() async throws {
            let adminScopes = try adminScopes.map { text throws(ClientError) in try AdminScope.parse(text) } ?? []
            if isPublic, !adminScopes.isEmpty { throw CommandError("--admin-scope: a public client cannot hold admin scopes") }
            let redirects = try ClientRedirects(
                redirectURIs: redirectURIs, postLogoutRedirectURIs: postLogoutRedirectURIs, firstParty: firstParty, requirePAR: requirePAR,
                broker: broker
            )
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                if isPublic {
                    let client = try await runtime.oauth.clients.createPublicClient(
                        realm: realm, clientId: clientId, requireDPoP: !allowBearer, scope: scope, redirects: redirects
                    )
                    print("created public client \(client.clientId) in realm \(realm)\(client.requireDPoP ? " (DPoP required)" : ""); it has no secret")
                    if client.firstParty, let unassured = client.redirectURIs.first(where: { $0.kind != .https }) {
                        let warning = "warning: --first-party skips the consent page, and \(unassured) (\(unassured.kind.rawValue)) can be received by "
                            + "another app on the device, which could then sign in as this one without the person's interaction (RFC 8252 §8.6). "
                            + "Prefer a claimed https redirect URI for a first-party app (docs/SECURITY.md).\n"
                        FileHandle.standardError.write(Data(warning.utf8))
                    }
                    if client.broker, let unassured = client.redirectURIs.first(where: { $0.kind != .https }) {
                        let warning = "warning: --broker with \(unassured) (\(unassured.kind.rawValue)): another app on the device can claim that address. "
                            + "A phishing link that carries its own session key would then hand it the delegation once the person allows the app "
                            + "(the consent page is always shown for such an address). Prefer a claimed https return address (docs/SECURITY.md).\n"
                        FileHandle.standardError.write(Data(warning.utf8))
                    }
                    return
                }
                let (client, secret) = try await runtime.oauth.clients.createClient(
                    realm: realm, clientId: clientId, requireDPoP: !allowBearer, scope: scope, redirects: redirects, adminScopes: adminScopes
                )
                print("created client \(client.clientId) in realm \(realm)\(client.requireDPoP ? " (DPoP required)" : "")")
                if !adminScopes.isEmpty {
                    let reach = realm == AdminScope.masterRealm ? "every realm" : "realm \(realm)"
                    print("admin scopes on \(reach): \(adminScopes.sorted().map(\.rawValue).joined(separator: ","))")
                }
                print("secret: \(secret)")
                print("store the secret now: only its digest is kept")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a realm's clients.")
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String

        func run() async throws {
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                for client in try await runtime.oauth.clients.listClients(realm: realm) {
                    var line = "\(client.clientId)\t\(client.isPublic ? "public" : "confidential")\tdpop=\(client.requireDPoP ? "required" : "optional")\tscope=\(client.scope)"
                    if !client.redirectURIs.isEmpty { line += "\tredirect_uris=" + client.redirectURIs.map(\.value).joined(separator: " ") }
                    if !client.postLogoutRedirectURIs.isEmpty { line += "\tpost_logout_redirect_uris=" + client.postLogoutRedirectURIs.map(\.value).joined(separator: " ") }
                    if client.firstParty { line += "\tfirst_party" }
                    if client.requirePAR { line += "\trequire_par" }
                    if client.broker { line += "\tbroker" }
                    if !client.adminScopes.isEmpty { line += "\tadmin_scopes=" + client.adminScopes.sorted().map(\.rawValue).joined(separator: ",") }
                    print(line)
                }
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a client.")
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Argument(help: "Client id.") var clientId: String

        func run() async throws {
            try await withRuntime(common) { runtime in
                try await runtime.oauth.clients.deleteClient(realm: realm, clientId: clientId)
                print("deleted client \(clientId) from realm \(realm)")
            }
        }
    }
}

struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Inspect and rotate realm signing keys.", subcommands: [Rotate.self, List.self])

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a new signing key active; the old one stays in the JWKS until tokens it signed expire."
        )
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String

        func run() async throws {
            try await withRuntime(common) { runtime in
                let realm = try await requireRealm(runtime, realm)
                let key = try await runtime.oauth.keys.rotate(realm: realm)
                print("realm \(realm.name): new active key \(key.kid) (\(key.algorithm)); the previous key stays published for \(realm.accessTokenLifetime + 30) s")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a realm's published keys.")
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String

        func run() async throws {
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                for key in try await runtime.oauth.keys.listKeys(realm: realm) {
                    let until = key.publishUntil.map { " until \($0.ISO8601Format())" } ?? ""
                    print("\(key.kid)\t\(key.algorithm)\t\(key.status.rawValue)\(until)")
                }
            }
        }
    }
}
