// The identity provider settings that differ by kind: scopes, labels, preset endpoints, Apple's key.
import Foundation
import KeywardJOSE

/// The settings that differ by kind: scopes, the button's default label, the preset endpoints of the providers
/// without a discovery document (Apple, Facebook) and Apple's client-secret key. Each refusal names the setting as
/// the command line spells it.
extension IdentityProviderService {
    /// Apple's scope names for its web flow; `openid` is implied there but harmless.
    static let appleScopes: Set<String> = ["openid", "name", "email"]
    static let defaultAppleScopes = ["name", "email"]
    static let defaultFacebookScopes = ["public_profile", "email"]

    /// Where the kinds without discovery live. Facebook's Graph version is pinned: a new one is an operator's
    /// choice made with `--authorization-endpoint` and friends, not something that changes under running code.
    static func presetEndpoints(_ kind: IdentityProvider.Kind) -> IdentityProvider.Endpoints? {
        switch kind {
        case .apple:
            .init(
                authorization: "https://appleid.apple.com/auth/authorize", token: "https://appleid.apple.com/auth/token",
                jwks: "https://appleid.apple.com/auth/keys"
            )
        case .facebook:
            .init(
                authorization: "https://www.facebook.com/v19.0/dialog/oauth", token: "https://graph.facebook.com/v19.0/oauth/access_token",
                userinfo: "https://graph.facebook.com/v19.0/me"
            )
        case .oidc, .google:
            nil
        }
    }

    static func defaultDisplayName(_ kind: IdentityProvider.Kind) -> String? {
        switch kind {
        case .google: "Google"
        case .apple: "Apple"
        case .facebook: "Facebook"
        case .oidc: nil
        }
    }

    static func validatedScopes(_ given: [String]?, kind: IdentityProvider.Kind) throws(IdentityProviderError) -> [String] {
        let scopes: [String]
        switch kind {
        case .oidc, .google: scopes = given ?? defaultScopes
        case .apple: scopes = given ?? defaultAppleScopes
        case .facebook: scopes = given ?? defaultFacebookScopes
        }
        guard !scopes.isEmpty, scopes.allSatisfy({ !$0.isEmpty && $0.unicodeScalars.allSatisfy { (0x21...0x7E).contains($0.value) && $0 != "\"" && $0 != "\\" && $0 != "," } })
        else { throw .invalidSetting("scopes", "space-separated scope names") }
        switch kind {
        case .oidc, .google:
            guard scopes.contains("openid") else { throw .invalidSetting("scopes", "space-separated scope names including openid") }
        case .apple:
            guard scopes.allSatisfy(appleScopes.contains) else { throw .invalidSetting("scopes", "apple knows only name and email (and openid)") }
        case .facebook:
            break
        }
        return scopes
    }

    /// The kind's preset with the operator's overrides, each an URL Keyward may call. Apple's revocation and
    /// Facebook's debug_token endpoints are derived from the token endpoint (`IdentityProvider.Endpoints`), so it
    /// must end the way theirs do.
    static func validatedEndpoints(_ registration: Registration) throws(IdentityProviderError) -> IdentityProvider.Endpoints? {
        let overrides = [
            ("authorization-endpoint", registration.authorizationEndpoint), ("token-endpoint", registration.tokenEndpoint),
            ("jwks-uri", registration.jwksURI), ("userinfo-endpoint", registration.userinfoEndpoint),
        ]
        guard var endpoints = presetEndpoints(registration.kind) else {
            if let given = overrides.first(where: { $0.1 != nil }) {
                throw .invalidSetting(given.0, "only apple and facebook take endpoints; \(registration.kind.rawValue) reads the issuer's discovery document")
            }
            return nil
        }
        for (setting, value) in overrides {
            guard let value else { continue }
            if let problem = OutboundURL.problem(value) { throw .invalidSetting(setting, problem) }
        }
        if let given = registration.authorizationEndpoint { endpoints.authorization = given }
        if let given = registration.tokenEndpoint { endpoints.token = given }
        switch registration.kind {
        case .apple:
            if registration.userinfoEndpoint != nil { throw .invalidSetting("userinfo-endpoint", "apple has none: its id_token carries the identity") }
            if let given = registration.jwksURI { endpoints.jwks = given }
            guard Self.path(of: endpoints.token).hasSuffix("/token") else {
                throw .invalidSetting("token-endpoint", "apple's token endpoint ends in /token (its revocation endpoint, …/revoke, sits beside it)")
            }
        case .facebook:
            if registration.jwksURI != nil { throw .invalidSetting("jwks-uri", "facebook has none: it issues no id_token") }
            if let given = registration.userinfoEndpoint { endpoints.userinfo = given }
            guard Self.path(of: endpoints.token).hasSuffix("/oauth/access_token") else {
                throw .invalidSetting("token-endpoint", "facebook's token endpoint ends in /oauth/access_token (debug_token is found beside /oauth)")
            }
        case .oidc, .google:
            break
        }
        for url in [endpoints.authorization, endpoints.token] + [endpoints.jwks, endpoints.userinfo].compactMap({ $0 }) where url.contains("?") {
            // The flow appends its own query; Facebook's and Apple's endpoints take none of their own.
            throw .invalidSetting(overrides.first { $0.1 == url }?.0 ?? "endpoint", "an endpoint without a query string")
        }
        return endpoints
    }

    /// Apple's team id, key id and private key, all three or none; the key sealed to this provider's row.
    func validatedAppleKey(_ registration: Registration) throws -> IdentityProvider.AppleKey? {
        guard registration.kind == .apple else {
            for (setting, value) in [("team-id", registration.appleTeamId), ("key-id", registration.appleKeyId), ("private-key-file", registration.applePrivateKeyPEM)]
            where value != nil {
                throw IdentityProviderError.invalidSetting(setting, "only apple providers sign their client secret with a key")
            }
            return nil
        }
        // Apple's team and key ids are ten upper-case letters or digits.
        func appleId(_ value: String?, _ setting: String) throws -> String {
            guard let value, value.utf8.count == 10, value.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            else { throw IdentityProviderError.invalidSetting(setting, "apple needs --\(setting): ten upper-case letters or digits, as Apple's developer account shows it") }
            return value
        }
        let teamId = try appleId(registration.appleTeamId, "team-id")
        let keyId = try appleId(registration.appleKeyId, "key-id")
        guard let pem = registration.applePrivateKeyPEM else {
            throw IdentityProviderError.invalidSetting("private-key-file", "apple needs --private-key-file: the .p8 key the client secret is signed with")
        }
        let key: SigningKey
        do {
            key = try SigningKey(algorithm: .es256, pem: pem)
        } catch {
            throw IdentityProviderError.invalidSetting("private-key-file", "not a P-256 private key in PEM form (the .p8 file Apple gives)")
        }
        let sealed = try masterKey.seal(key.serialized, context: IdentityProvider.appleKeyContext(realm: registration.realm, alias: registration.alias))
        return .init(teamId: teamId, keyId: keyId, sealedPrivateKey: sealed)
    }

    private static func path(of url: String) -> String { URLComponents(string: url)?.path ?? "" }
}
