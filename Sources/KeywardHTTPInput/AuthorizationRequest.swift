// The authorization endpoint's parameters, read and checked before anything is looked up (issue 28; RFC 6749 §4.1.1).
import KeywardJOSE

/// An authorization request's parameters (RFC 6749 §4.1.1, OpenID Connect Core §3.1.2.1, RFC 7636, RFC 9449 §10,
/// RFC 9126), read from the query or a pushed request's form and checked on their own: what the parameters alone
/// decide. Which client and redirect URI they name, whether that client may use them, and whether a person is
/// signed in, the endpoint decides after.
///
/// `AuthorizationRequest.Target` is read first and on its own, because a refusal may be sent to the redirect URI
/// only once the client has been found and the URI matched one it registered; before that, the refusal is shown
/// to the person as a page (RFC 6749 §4.1.2.1).
public struct AuthorizationRequest: Sendable, Equatable {
    /// Where a refusal would go: the client, its redirect URI and the state to hand back.
    public struct Target: Sendable, Equatable {
        public let clientId: String?
        public let redirectURI: String?
        /// Handed back as it came, when it is one a client could have sent.
        public let state: String?

        public init(_ parameters: [String: String]) {
            clientId = parameters["client_id"].flatMap { AuthorizationRequest.isVisible($0, max: 128) ? $0 : nil }
            redirectURI = parameters["redirect_uri"].flatMap { $0.utf8.count <= RedirectURI.maxLength ? $0 : nil }
            state = parameters["state"].flatMap { AuthorizationRequest.isVSChar($0, max: AuthorizationRequest.maxStateLength) ? $0 : nil }
        }
    }

    public enum Prompt: String, Sendable, Equatable {
        /// Sign in again even with a session.
        case login
        /// No page at all: `login_required` (or `consent_required`) when one would be needed.
        case none
    }

    public static let maxStateLength = 1024
    public static let maxNonceLength = 512
    public static let maxScopes = 50

    public let clientId: String
    public let redirectURI: String
    /// The requested scopes, each once, in the order sent.
    public let scopes: [String]
    public let state: String?
    public let nonce: String?
    /// The S256 challenge: base64url of 32 bytes (RFC 7636 §4.2).
    public let codeChallenge: String
    public let prompt: Prompt?
    public let loginHint: String?
    /// `kc_idp_hint` or `idp_hint`: go straight to this identity provider, as Keycloak does.
    public let identityProviderHint: String?
    /// RFC 9449 §10: the thumbprint of the key the code is bound to.
    public let dpopJKT: String?
    /// OpenID Connect Core §3.1.2.1, in seconds.
    public let maxAge: Int?
    public let acrValues: [String]

    /// Reads and checks the parameters; the first refusal names the parameter at fault.
    public init(_ parameters: [String: String]) throws(AuthorizationRequestError) {
        typealias Refusal = AuthorizationRequestError
        let target = Target(parameters)
        guard let clientId = target.clientId else {
            throw Refusal(.invalidRequest, parameters["client_id"] == nil ? "client_id is missing" : "client_id is not 1-128 visible ASCII characters")
        }
        guard let redirectURI = target.redirectURI else {
            throw Refusal(.invalidRequest, parameters["redirect_uri"] == nil ? "redirect_uri is missing" : "redirect_uri is too long")
        }
        if parameters["state"] != nil, target.state == nil {
            throw Refusal(.invalidRequest, "state must be at most \(Self.maxStateLength) visible ASCII characters or spaces")
        }
        if parameters["request"] != nil { throw Refusal(.requestNotSupported, "request objects are not supported; push the request (PAR) instead") }
        if parameters["registration"] != nil { throw Refusal(.registrationNotSupported, "the registration parameter is not supported") }
        guard let responseType = parameters["response_type"] else { throw Refusal(.invalidRequest, "response_type is missing") }
        guard responseType == "code" else {
            throw Refusal(.unsupportedResponseType, "response_type '\(responseType.prefix(32))' is not supported; use code")
        }
        if let mode = parameters["response_mode"], mode != "query" {
            throw Refusal(.invalidRequest, "response_mode '\(mode.prefix(32))' is not supported; use query")
        }
        guard let challenge = parameters["code_challenge"] else {
            throw Refusal(.invalidRequest, "code_challenge is missing: PKCE with S256 is required for every client")
        }
        guard let method = parameters["code_challenge_method"], method == "S256" else {
            throw Refusal(.invalidRequest, "code_challenge_method must be S256 (plain is not accepted)")
        }
        guard Self.isBase64URLSHA256(challenge) else {
            throw Refusal(.invalidRequest, "code_challenge must be the base64url SHA-256 of the verifier (43 characters)")
        }
        scopes = try Self.tokens(parameters["scope"], name: "scope", max: Self.maxScopes, Self.isScopeToken)
        if let nonce = parameters["nonce"], !Self.isVSChar(nonce, max: Self.maxNonceLength) || nonce.isEmpty {
            throw Refusal(.invalidRequest, "nonce must be 1-\(Self.maxNonceLength) visible ASCII characters or spaces")
        }
        prompt = try Self.prompt(parameters["prompt"])
        if let hint = parameters["login_hint"], hint.utf8.count > 256 || hint.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw Refusal(.invalidRequest, "login_hint must be at most 256 bytes without control characters")
        }
        let hints = [parameters["kc_idp_hint"], parameters["idp_hint"]].compactMap { $0 }
        if hints.count == 2, hints[0] != hints[1] { throw Refusal(.invalidRequest, "kc_idp_hint and idp_hint name different providers") }
        if let hint = hints.first, !Self.isVisible(hint, max: 64) {
            throw Refusal(.invalidRequest, "idp_hint must be a provider alias of 1-64 visible ASCII characters")
        }
        if let jkt = parameters["dpop_jkt"], !Self.isBase64URLSHA256(jkt) {
            throw Refusal(.invalidRequest, "dpop_jkt must be a JWK SHA-256 thumbprint, base64url (43 characters)")
        }
        if let text = parameters["max_age"] {
            guard !text.isEmpty, text.count <= 9, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let seconds = Int(text) else {
                throw Refusal(.invalidRequest, "max_age must be a number of seconds, 0-999999999")
            }
            maxAge = seconds
        } else {
            maxAge = nil
        }
        acrValues = try Self.tokens(parameters["acr_values"], name: "acr_values", max: 10, Self.isScopeToken)
        self.clientId = clientId
        self.redirectURI = redirectURI
        state = target.state
        nonce = parameters["nonce"]
        codeChallenge = challenge
        loginHint = parameters["login_hint"]
        identityProviderHint = hints.first
        dpopJKT = parameters["dpop_jkt"]
    }

    private static func prompt(_ text: String?) throws(AuthorizationRequestError) -> Prompt? {
        guard let text else { return nil }
        let values = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard !values.isEmpty else { throw AuthorizationRequestError(.invalidRequest, "prompt is empty") }
        if values.contains("none"), values.count > 1 {
            throw AuthorizationRequestError(.invalidRequest, "prompt=none cannot be combined with other values")
        }
        var prompt: Prompt?
        for value in values {
            guard let known = Prompt(rawValue: value) else {
                throw AuthorizationRequestError(.invalidRequest, "prompt '\(value.prefix(32))' is not supported; use login or none")
            }
            prompt = known
        }
        return prompt
    }

    /// Space-separated tokens, each once, in the order sent (RFC 6749 §3.3).
    private static func tokens(
        _ text: String?, name: String, max: Int, _ isToken: (Substring) -> Bool
    ) throws(AuthorizationRequestError) -> [String] {
        guard let text else { return [] }
        var seen = Set<Substring>()
        var tokens: [String] = []
        for token in text.split(separator: " ", omittingEmptySubsequences: true) {
            guard isToken(token) else { throw AuthorizationRequestError(.invalidScope, "\(name) '\(token.prefix(32))' has characters a scope cannot have") }
            if seen.insert(token).inserted { tokens.append(String(token)) }
        }
        guard tokens.count <= max else { throw AuthorizationRequestError(.invalidScope, "\(name) lists \(tokens.count) values, at most \(max)") }
        return tokens
    }

    /// RFC 6749 §3.3's scope-token: %x21 / %x23-5B / %x5D-7E, at most 128 of them here.
    private static func isScopeToken(_ token: Substring) -> Bool {
        !token.isEmpty && token.utf8.count <= 128 && token.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
    }

    /// RFC 6749 Appendix A's VSCHAR (%x20-7E).
    static func isVSChar(_ text: String, max: Int) -> Bool {
        text.utf8.count <= max && text.utf8.allSatisfy { (0x20...0x7E).contains($0) }
    }

    /// 1-`max` visible ASCII characters (%x21-7E).
    static func isVisible(_ text: String, max: Int) -> Bool {
        (1...max).contains(text.utf8.count) && text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// Strict base64url (`KeywardJOSE.Base64URL`: no padding, no foreign characters, no stray trailing bits) of 32
    /// bytes, a SHA-256: 43 characters.
    static func isBase64URLSHA256(_ text: String) -> Bool {
        text.utf8.count == 43 && (try? Base64URL.decode(text))?.count == 32
    }
}

/// A refused authorization request: the error code of RFC 6749 §4.1.2.1 or OpenID Connect Core §3.1.2.6, and a
/// description naming the parameter at fault.
public struct AuthorizationRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case invalidRequest = "invalid_request"
        case unsupportedResponseType = "unsupported_response_type"
        case invalidScope = "invalid_scope"
        case requestNotSupported = "request_not_supported"
        case registrationNotSupported = "registration_not_supported"
    }

    public let code: Code
    public let description: String

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
