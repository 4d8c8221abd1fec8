// `keyward issuers`: the auth providers whose host-signed tokens a realm exchanges, and their enrolled users.
import ArgumentParser
import Foundation
import KeywardServer

struct Issuers: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage host-token issuers: a customer's own auth provider whose JWTs a realm exchanges for Keyward tokens.",
        discussion: """
            An app sends its provider's JWT to the realm's token endpoint with grant_type \
            urn:ietf:params:oauth:grant-type:jwt-bearer, the id of a public client (`keyward clients create --public`) \
            and a DPoP proof; only users enrolled with `keyward issuers enroll` are accepted.
            """,
        subcommands: [Add.self, Update.self, List.self, Remove.self, Enroll.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register an issuer with its key source and token rules.",
            discussion: """
                Keys come from a JWKS URL (https, or http on a loopback address only; cached as its Cache-Control \
                says, refetched once on an unknown kid, the last good set kept when a fetch fails) or from PEM \
                certificates (each certificate's validity is checked at every use). Tokens must carry typ JWT, the \
                issuer as iss, the audience (default: the realm's issuer URL), sub = an enrolled enterprise id, \
                exp, nbf or iat, and jti (unless --no-require-jti); a jti is accepted once.
                """
        )
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Argument(help: "The issuer: the exact `iss` its tokens carry.") var issuer: String
        @Option(name: .customLong("jwks-url"), help: "URL of the issuer's JWK Set.") var jwksURL: String?
        @Option(name: .customLong("pem-file"), help: "A PEM file of the issuer's certificate(s); repeat for several files.") var pemFiles: [String] = []
        @Option(help: "Allowed signature algorithms, comma separated (default RS256).") var algorithms: String?
        @Option(name: .customLong("max-lifetime"), help: "Longest accepted exp − (nbf or iat), in seconds (default 900).") var maxLifetime: Int?
        @Option(help: "Clock skew tolerated, in seconds (default 30, at most 300).") var leeway: Int?
        @Option(help: "The aud tokens must name (default: the realm's issuer URL).") var audience: String?
        @Flag(inversion: .prefixedNo, help: "Require a jti claim (default: required).") var requireJti = true
        @Flag(name: .customLong("allow-bearer"), help: "Accept exchanges without a DPoP proof (bearer tokens). Weakens the binding; see docs/SECURITY.md.") var allowBearer = false
        @Option(help: "Client ids allowed to exchange its tokens, comma separated (default: any client of the realm).") var clients: String?

        func run() async throws {
            let pem = try Issuers.readPEM(pemFiles)
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                let registration = HostIssuerService.Registration(
                    realm: realm, issuer: issuer, jwksURL: jwksURL, pemCertificates: pem,
                    algorithms: algorithms.map(Issuers.commaList),
                    maxLifetime: maxLifetime, leeway: leeway, audience: audience, requireJTI: requireJti, allowBearer: allowBearer,
                    clients: clients.map(Issuers.commaList)
                )
                let added: HostIssuer
                do {
                    added = try await runtime.hostTokens.issuers.add(registration)
                } catch let error as HostIssuerError {
                    throw CommandError(error.description)
                }
                print("registered issuer \(added.issuer) in realm \(realm)")
                print(Issuers.describe(added, realmIssuer: runtime.oauth.realms.issuer(of: realm)))
                print("enroll its users with: keyward issuers enroll --realm \(realm) '\(added.issuer)' ENTERPRISE_ID…")
            }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change an issuer's settings in place; its enrolled users stay linked.",
            discussion: "Only the settings given change. A new key source (--jwks-url or --pem-file) replaces the old one, e.g. a renewed certificate; it is checked as `add` checks it."
        )
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Argument(help: "The issuer, as registered.") var issuer: String
        @Option(name: .customLong("jwks-url"), help: "A new JWK Set URL (replaces PEM certificates).") var jwksURL: String?
        @Option(name: .customLong("pem-file"), help: "New PEM certificate file(s) (replace the key source); repeat for several.") var pemFiles: [String] = []
        @Option(help: "Allowed signature algorithms, comma separated.") var algorithms: String?
        @Option(name: .customLong("max-lifetime"), help: "Longest accepted exp − (nbf or iat), in seconds.") var maxLifetime: Int?
        @Option(help: "Clock skew tolerated, in seconds (at most 300).") var leeway: Int?
        @Option(help: "The aud tokens must name.") var audience: String?
        @Flag(name: .customLong("realm-audience"), help: "Go back to the realm's issuer URL as the audience.") var realmAudience = false
        @Flag(inversion: .prefixedNo, help: "Require a jti claim.") var requireJti: Bool?
        @Flag(inversion: .prefixedNo, help: "Accept exchanges without a DPoP proof.") var allowBearer: Bool?
        @Option(help: "Client ids allowed to exchange its tokens, comma separated.") var clients: String?
        @Flag(name: .customLong("any-client"), help: "Let any client of the realm exchange its tokens.") var anyClient = false

        func validate() throws {
            if jwksURL != nil && !pemFiles.isEmpty { throw ValidationError("give --jwks-url or --pem-file, not both") }
            if audience != nil && realmAudience { throw ValidationError("give --audience or --realm-audience, not both") }
            if clients != nil && anyClient { throw ValidationError("give --clients or --any-client, not both") }
        }

        func run() async throws {
            let pem = try Issuers.readPEM(pemFiles)
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                let updated: HostIssuer
                do {
                    updated = try await runtime.hostTokens.issuers.update(realm: realm, issuer: issuer) { registration in
                        if let jwksURL { (registration.jwksURL, registration.pemCertificates) = (jwksURL, nil) }
                        if let pem { (registration.jwksURL, registration.pemCertificates) = (nil, pem) }
                        if let algorithms { registration.algorithms = Issuers.commaList(algorithms) }
                        if let maxLifetime { registration.maxLifetime = maxLifetime }
                        if let leeway { registration.leeway = leeway }
                        if let audience { registration.audience = audience }
                        if realmAudience { registration.audience = nil }
                        if let requireJti { registration.requireJTI = requireJti }
                        if let allowBearer { registration.allowBearer = allowBearer }
                        if let clients { registration.clients = Issuers.commaList(clients) }
                        if anyClient { registration.clients = nil }
                    }
                } catch let error as HostIssuerError {
                    throw CommandError(error.description)
                }
                print("updated issuer \(updated.issuer) in realm \(realm)")
                print(Issuers.describe(updated, realmIssuer: runtime.oauth.realms.issuer(of: realm)))
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a realm's issuers and their settings.")
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Flag(help: "Also list each issuer's enrolled enterprise ids.") var users = false

        func run() async throws {
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                let issuers = try await runtime.hostTokens.issuers.list(realm: realm)
                if issuers.isEmpty { print("realm \(realm) has no host-token issuers") }
                for issuer in issuers {
                    print(issuer.issuer)
                    print(Issuers.describe(issuer, realmIssuer: runtime.oauth.realms.issuer(of: realm)))
                    let enrolled = try await runtime.hostTokens.issuers.enrolled(realm: realm, issuer: issuer.issuer)
                    print("  enrolled users: \(enrolled.count)")
                    if users { for identity in enrolled { print("    \(identity.subject)\tuser=\(identity.userId)") } }
                }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove an issuer; its tokens are refused at once on this node and within seconds on others.",
            discussion: "The enrolled users stay (with their push devices and sessions); only their link to this issuer goes."
        )
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Argument(help: "The issuer, as registered.") var issuer: String

        func run() async throws {
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                do {
                    let unlinked = try await runtime.hostTokens.issuers.remove(realm: realm, issuer: issuer)
                    print("removed issuer \(issuer) from realm \(realm); \(unlinked) enrolled identities unlinked, their users kept")
                } catch let error as HostIssuerError {
                    throw CommandError(error.description)
                }
            }
        }
    }

    struct Enroll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enroll the customer's users by enterprise id (the sub of their host tokens).",
            discussion: """
                Each id becomes a Keyward user (username = the id, no password) linked to the issuer. Ids come as \
                arguments or from --csv FILE: one id per line in the first column; a header line `enterprise_id` \
                is skipped, as are empty lines. Ids enrolled already are reported, not errors. Exits 1 if any id failed.
                """
        )
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Argument(help: "The issuer, as registered.") var issuer: String
        @Argument(help: "Enterprise ids.") var subjects: [String] = []
        @Option(help: "A CSV file of enterprise ids (first column).") var csv: String?

        func validate() throws {
            guard !subjects.isEmpty || csv != nil else { throw ValidationError("give enterprise ids or --csv FILE") }
        }

        func run() async throws {
            var ids = subjects
            if let csv { ids += try Issuers.enterpriseIds(csvFile: csv) }
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                let results: [HostIssuerService.Enrollment]
                do {
                    results = try await runtime.hostTokens.issuers.enroll(realm: realm, issuer: issuer, subjects: ids)
                } catch let error as HostIssuerError {
                    throw CommandError(error.description)
                }
                var failed = 0
                for result in results {
                    switch result {
                    case .enrolled(let user): print("enrolled \(user.username)\tuser=\(user.id)")
                    case .alreadyEnrolled(let user): print("already enrolled \(user.username)\tuser=\(user.id)")
                    case .failed(let subject, let problem):
                        failed += 1
                        // The ids come from a customer's file: no control character reaches the terminal.
                        let shown = String(String.UnicodeScalarView(subject.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
                        FileHandle.standardError.write(Data("failed \(shown): \(problem)\n".utf8))
                    }
                }
                print("\(results.count - failed) of \(results.count) enterprise ids enrolled for \(issuer)")
                if failed > 0 { throw ExitCode(1) }
            }
        }
    }

    /// `RS256, ES256` → ["RS256", "ES256"]: the comma-separated values of --algorithms and --clients.
    static func commaList(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// The PEM files' text, joined; nil for none.
    static func readPEM(_ paths: [String]) throws -> String? {
        guard !paths.isEmpty else { return nil }
        return try paths.map { path in
            do {
                return try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw CommandError("pem-file: cannot read \(path): \(error.localizedDescription)")
            }
        }.joined(separator: "\n")
    }

    static func describe(_ issuer: HostIssuer, realmIssuer: String) -> String {
        let keys = switch issuer.keySource {
        case .jwksURL(let url): "jwks-url \(url)"
        case .pemCertificates(let pem): "pem certificates (\(pem.components(separatedBy: "BEGIN CERTIFICATE").count - 1))"
        }
        return """
              keys: \(keys)
              algorithms: \(issuer.algorithms.map(\.rawValue).joined(separator: ","))  max-lifetime: \(issuer.maxLifetime) s  leeway: \(issuer.leeway) s
              audience: \(issuer.audience ?? realmIssuer + " (the realm's issuer URL)")
              jti: \(issuer.requireJTI ? "required" : "optional")  DPoP: \(issuer.allowBearer ? "optional (bearer exchanges allowed)" : "required")
              clients: \(issuer.clients?.joined(separator: ",") ?? "any client of the realm")
            """
    }

    /// The first column of each line; quotes around a value are removed; a header `enterprise_id` and blank lines skipped.
    static func enterpriseIds(csvFile path: String) throws -> [String] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw CommandError("csv: cannot read \(path): \(error.localizedDescription)")
        }
        var ids: [String] = []
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            var first = line.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            first = first.trimmingCharacters(in: .whitespaces)
            if first.count >= 2, first.hasPrefix("\""), first.hasSuffix("\"") { first = String(first.dropFirst().dropLast()) }
            if first.isEmpty || (index == 0 && first.lowercased() == "enterprise_id") { continue }
            ids.append(first)
        }
        return ids
    }
}
