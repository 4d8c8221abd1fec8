// A sign-in under way: the authorization URL to open and what finishing it needs, kept until the redirect comes back.
import Crypto
import Foundation
import KeywardJOSE

/// A sign-in the app started (``SignInClient/startSignIn(_:)``): the URL to open in the system browser, and the
/// secrets finishing it needs — the PKCE verifier (RFC 7636), `state` and `nonce`. Codable, so an app that may be
/// stopped while the browser is open can keep it (in the Keychain: it holds the verifier) and finish later.
public struct SignInRequest: Sendable, Codable, Equatable {
    /// Open this in the system browser (`ASWebAuthenticationSession` on Apple platforms, Custom Tabs on Android).
    public let url: URL
    public let redirectURI: String
    public let state: String
    public let nonce: String
    public let codeVerifier: String
    /// The DPoP key's thumbprint the code is bound to (RFC 9449 §10).
    public let dpopThumbprint: String
    /// What the request asked of the sign-in, which the answer's id_token must show (OpenID Connect Core §3.1.3.7).
    public let prompt: String?
    public let maxAge: Int?
    public let acrValues: [String]?
    public let startedAt: Date?

    init(url: URL, redirectURI: String, state: String, nonce: String, codeVerifier: String, dpopThumbprint: String, options: SignInOptions, startedAt: Date) {
        (self.url, self.redirectURI, self.state, self.nonce, self.codeVerifier, self.dpopThumbprint) = (url, redirectURI, state, nonce, codeVerifier, dpopThumbprint)
        (prompt, maxAge, acrValues, self.startedAt) = (options.prompt, options.maxAge, options.acrValues.isEmpty ? nil : options.acrValues, startedAt)
    }

    /// 32 random bytes, base64url: a verifier of 43 characters (RFC 7636 §4.1), and as much for `state` and `nonce`.
    static func randomValue() -> String { Base64URL.encode(SecureRandom.bytes(32)) }

    /// The S256 challenge of a verifier (RFC 7636 §4.2).
    static func challenge(for verifier: String) -> String { Base64URL.encode(SHA256.hash(data: Array(verifier.utf8))) }
}

/// What a sign-in asks of the person, beside the client's settings.
public struct SignInOptions: Sendable {
    /// `login`: sign in again even in a signed-in browser; `none`: no page at all, or an error.
    public var prompt: String?
    /// Prefills the username.
    public var loginHint: String?
    /// Go straight to this identity provider (its alias).
    public var identityProviderHint: String?
    /// The longest a sign-in may be ago, in seconds.
    public var maxAge: Int?
    /// `urn:keyward:acr:mfa` asks for a second factor.
    public var acrValues: [String]

    public init(prompt: String? = nil, loginHint: String? = nil, identityProviderHint: String? = nil, maxAge: Int? = nil, acrValues: [String] = []) {
        (self.prompt, self.loginHint, self.identityProviderHint, self.maxAge, self.acrValues) = (prompt, loginHint, identityProviderHint, maxAge, acrValues)
    }
}

/// The tokens of a signed-in app, bound to its DPoP key. Codable, for an app that keeps its sign-in across launches
/// (store it in the Keychain: the refresh token signs the person in).
public struct SignInTokens: Sendable, Codable, Equatable {
    public var accessToken: String
    public var refreshToken: String?
    public var idToken: String
    /// When the access token expires, by the device's clock.
    public var accessTokenExpiresAt: Date
    /// The verified id_token's claims: `sub`, `auth_time`, `amr`, `acr`, …
    public var subject: String
    public var authTime: Date?
    public var amr: [String]
    public var acr: String?
}
