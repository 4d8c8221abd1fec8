// Checking a provider's id_token: signature, issuer, audience, times, nonce, and reading its claims.
import Foundation
import KeywardJOSE

/// An id_token's checks (OpenID Connect Core §3.1.3.7): the signature by a key of the provider's JWK Set with an
/// algorithm the provider lists (never `none`, never HMAC), `iss` exactly the provider's, `aud` naming Keyward's
/// client (and `azp` when present or when `aud` names several), `exp` and `iat` with a minute of leeway, the
/// transaction's `nonce`, a `sub`; for Google a `hd` restriction when configured.
struct ProviderIDToken: Sendable {
    let subject: String
    let email: String?
    let emailVerified: Bool?
    /// Apple: the address is a private relay address (`…@privaterelay.appleid.com`) for this app only.
    let isPrivateEmail: Bool?
    let name: String?
    /// When the person last gave the provider a credential (`auth_time`), if the provider says.
    let authTime: Date?
    /// The provider's username claim's value, when it has one configured and the token carries it.
    let preferredUsername: String?

    static let leeway: TimeInterval = 60
    static let googleIssuerWithoutScheme = "accounts.google.com"
    /// Keyward verifies these; HMAC algorithms are not JWSAlgorithm cases at all.
    static let verifiable: Set<JWSAlgorithm> = [.rs256, .rs384, .rs512, .ps256, .es256, .es384, .es512, .edDSA]

    init(
        _ compact: String, provider: IdentityProvider, metadata: IdentityProviderMetadata, keys: JWKSet, nonce: String, now: Date
    ) throws(SignInFailure) {
        // Google documents both forms of its issuer in id_tokens; any other provider's must be exactly its own.
        let issuers = provider.kind == .google && provider.issuer == IdentityProviderService.googleIssuer
            ? [provider.issuer, Self.googleIssuerWithoutScheme] : [provider.issuer]
        let policy = JWTVerificationPolicy(
            allowedAlgorithms: metadata.idTokenAlgorithms.intersection(Self.verifiable), keys: .kidOptional(keys),
            requiredClaims: ["iss", "sub", "aud", "exp", "iat", "nonce"], issuer: issuers.count == 1 ? provider.issuer : nil,
            audience: provider.clientId, leeway: Self.leeway
        )
        let claims: JSONObject
        do throws(JOSEError) {
            claims = try JWTVerifier.verify(compact, policy: policy, now: now).claims
        } catch {
            throw SignInFailure(.idTokenInvalid, "the id_token was refused: \(error.message)")
        }
        guard let issuer = claims.string("iss"), issuers.contains(issuer) else {
            throw SignInFailure(.idTokenInvalid, "the id_token was refused: its issuer is not \(provider.issuer)")
        }
        let audiences = claims["aud"]?.arrayValue?.compactMap(\.stringValue) ?? claims.string("aud").map { [$0] } ?? []
        if let azp = claims["azp"] {
            guard azp.stringValue == provider.clientId else { throw SignInFailure(.idTokenInvalid, "the id_token's azp is another client") }
        } else if audiences.count > 1 {
            throw SignInFailure(.idTokenInvalid, "the id_token names several audiences and no azp")
        }
        guard claims.string("nonce") == nonce else { throw SignInFailure(.idTokenInvalid, "the id_token's nonce is not this sign-in's") }
        guard let subject = claims.string("sub"), (1...255).contains(subject.utf8.count) else {
            throw SignInFailure(.idTokenInvalid, "the id_token's sub is missing or longer than 255 bytes")
        }
        if let domain = provider.hostedDomain, claims.string("hd") != domain {
            throw SignInFailure(.accountRefused, "only accounts of \(domain) may sign in with this provider")
        }
        self.subject = subject
        email = claims.string("email").map { String($0.prefix(320)) }
        emailVerified = Self.flag(claims["email_verified"])
        isPrivateEmail = Self.flag(claims["is_private_email"])
        name = claims.string("name").map { String($0.prefix(200)) }
        authTime = claims["auth_time"]?.numberValue.map { Date(timeIntervalSince1970: $0) }
        preferredUsername = provider.usernameClaim.flatMap { claims.string($0) }
    }

    /// Apple has sent its booleans both as JSON booleans and as the strings "true" / "false"; anything else is
    /// no answer.
    static func flag(_ value: JSONValue?) -> Bool? {
        if let bool = value?.boolValue { return bool }
        switch value?.stringValue {
        case "true": return true
        case "false": return false
        default: return nil
        }
    }
}
