// Signing a person in to an app with Keyward: authorization code, PKCE, DPoP-bound tokens, refresh and sign-out.
import Foundation
import KeywardJOSE
import KeywardWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Signs a person in to the app through the realm's authorization endpoint, as any OpenID Connect client would
/// (RFC 8252 for native apps): PKCE with S256, `state` and `nonce`, the code bound to the app's DPoP key
/// (`dpop_jkt`, RFC 9449 §10), the `iss` of the answer checked (RFC 9207), the id_token verified against the
/// realm's JWKS, then tokens bound to the same key, refreshed with it, and revoked at sign-out.
///
/// The client works with any presenter: ``startSignIn(_:)`` gives the URL to open (in `ASWebAuthenticationSession`
/// on Apple platforms; on Linux the caller opens it, or listens on a loopback redirect), and
/// ``finishSignIn(_:redirect:)`` takes the URL the browser was sent back to.
public actor SignInClient {
    /// The app's registration at the realm.
    public struct Configuration: Sendable {
        /// The realm's issuer URL, `https://HOST/realms/NAME`.
        public var issuer: String
        /// A public client of the realm.
        public var clientId: String
        /// One of the client's registered redirect URIs, exactly (a loopback one may carry any port).
        public var redirectURI: String
        public var scopes: [String]
        /// Where RP-initiated logout sends the browser back, when the client registered one.
        public var postLogoutRedirectURI: String?
        /// Push the request first (RFC 9126) even when the realm does not ask for it.
        public var pushRequests: Bool

        public init(
            issuer: String, clientId: String, redirectURI: String, scopes: [String] = ["openid"], postLogoutRedirectURI: String? = nil,
            pushRequests: Bool = false
        ) {
            self.issuer = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
            (self.clientId, self.redirectURI, self.scopes, self.postLogoutRedirectURI, self.pushRequests) = (
                clientId, redirectURI, scopes, postLogoutRedirectURI, pushRequests
            )
        }
    }

    public nonisolated let configuration: Configuration
    /// Signs the DPoP proofs: the code and every token are bound to its key.
    public nonisolated var dpop: DPoPSigner { endpoint.signer }
    private nonisolated let endpoint: DPoPTokenEndpoint
    private let session: URLSession
    private let verifier: RealmTokenVerifier
    private let clock: @Sendable () -> Date
    private var metadata: ProviderMetadata?
    /// The tokens of the signed-in person, if any.
    public private(set) var tokens: SignInTokens?
    private var refreshing: Task<SignInTokens, any Error>?

    /// A client for `configuration`, its tokens bound to `dpop`'s key; `tokens` restores a sign-in the app kept.
    public init(
        configuration: Configuration, dpop: DPoPSigner, tokens: SignInTokens? = nil, session: URLSession = .shared,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.configuration = configuration
        self.endpoint = DPoPTokenEndpoint(issuer: configuration.issuer, signer: dpop, session: session)
        self.session = session
        self.verifier = RealmTokenVerifier(issuer: configuration.issuer, session: session, clock: clock)
        self.tokens = tokens
        self.clock = clock
    }

    /// The realm's discovery document (OpenID Connect Discovery 1.0), fetched once; its `issuer` must be the one
    /// configured (§4.3).
    public func discover() async throws -> ProviderMetadata {
        if let metadata { return metadata }
        guard let url = URL(string: configuration.issuer + "/.well-known/openid-configuration") else { throw KeywardKitError.invalidURL(configuration.issuer) }
        let (data, response) = try await session.keywardGet(url, accept: "application/json")
        guard response.statusCode == 200 else { throw KeywardKitError.server(status: response.statusCode, code: nil, description: "discovery at \(url)") }
        let found = try JSONDecoder().decode(ProviderMetadata.self, from: data)
        guard found.issuer == configuration.issuer else {
            throw KeywardKitError.unexpectedResponse("the discovery document names issuer \(found.issuer), not \(configuration.issuer)")
        }
        guard found.authorizationEndpoint != nil, found.codeChallengeMethodsSupported?.contains("S256") ?? false else {
            throw KeywardKitError.unexpectedResponse("the realm at \(configuration.issuer) offers no authorization endpoint with PKCE S256")
        }
        metadata = found
        return found
    }

    /// Starts a sign-in: the URL to open, and what ``finishSignIn(_:redirect:)`` needs. Pushes the request first
    /// (RFC 9126) when the configuration or the realm asks for it.
    public func startSignIn(_ options: SignInOptions = SignInOptions()) async throws -> SignInRequest {
        let metadata = try await discover()
        let (state, nonce, verifier) = (SignInRequest.randomValue(), SignInRequest.randomValue(), SignInRequest.randomValue())
        var parameters: [(String, String)] = [
            ("response_type", "code"), ("client_id", configuration.clientId), ("redirect_uri", configuration.redirectURI),
            ("scope", configuration.scopes.joined(separator: " ")), ("state", state), ("nonce", nonce),
            ("code_challenge", SignInRequest.challenge(for: verifier)), ("code_challenge_method", "S256"), ("dpop_jkt", dpop.thumbprint),
        ]
        if let prompt = options.prompt { parameters.append(("prompt", prompt)) }
        if let hint = options.loginHint { parameters.append(("login_hint", hint)) }
        if let hint = options.identityProviderHint { parameters.append(("kc_idp_hint", hint)) }
        if let maxAge = options.maxAge { parameters.append(("max_age", String(maxAge))) }
        if !options.acrValues.isEmpty { parameters.append(("acr_values", options.acrValues.joined(separator: " "))) }
        guard let authorization = metadata.authorizationEndpoint else { throw KeywardKitError.unexpectedResponse("no authorization endpoint") }
        let query: [(String, String)]
        if let pushEndpoint = metadata.pushedAuthorizationRequestEndpoint, configuration.pushRequests || metadata.requirePushedAuthorizationRequests == true {
            query = [("client_id", configuration.clientId), ("request_uri", try await push(parameters, to: pushEndpoint))]
        } else {
            query = parameters
        }
        let text = authorization + "?" + DPoPTokenEndpoint.formBody(query)
        guard let url = URL(string: text) else { throw KeywardKitError.invalidURL(text) }
        return SignInRequest(
            url: url, redirectURI: configuration.redirectURI, state: state, nonce: nonce, codeVerifier: verifier, dpopThumbprint: dpop.thumbprint,
            options: options, startedAt: clock()
        )
    }

    private func push(_ parameters: [(String, String)], to endpoint: String) async throws -> String {
        guard let url = URL(string: endpoint) else { throw KeywardKitError.invalidURL(endpoint) }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(DPoPTokenEndpoint.formBody(parameters).utf8)
        let (data, response) = try await session.keywardData(for: request)
        guard response.statusCode == 201, let object = try? StrictJSON.parseObject(Array(data)), let requestURI = object["request_uri"]?.stringValue else {
            let body = try? JSONDecoder().decode(OAuthErrorBody.self, from: data)
            throw KeywardKitError.server(status: response.statusCode, code: body?.error.rawValue, description: body?.errorDescription)
        }
        return requestURI
    }

    /// Finishes the sign-in from the URL the browser was sent back to: the redirect URI is the request's, `state`
    /// and `iss` are the ones expected, then the code is redeemed with a DPoP proof and the id_token verified
    /// (signature, `iss`, `aud`, `exp`, `nonce`, `at_hash`). An error the realm sent back is thrown as
    /// ``KeywardKitError/signInRefused(code:description:)``.
    public func finishSignIn(_ request: SignInRequest, redirect: URL) async throws -> SignInTokens {
        let metadata = try await discover()
        let received = redirect.absoluteString
        let base = received.split(separator: "?", maxSplits: 1).first.map(String.init) ?? received
        guard Self.sameRedirect(base, request.redirectURI) else {
            throw KeywardKitError.signInMismatch("the answer came to \(base), not to the redirect URI \(request.redirectURI)")
        }
        let items = URLComponents(string: received)?.queryItems ?? []
        func parameter(_ name: String) -> String? { items.first { $0.name == name }?.value }
        guard parameter("state") == request.state else { throw KeywardKitError.signInMismatch("state is not the one this sign-in sent") }
        if metadata.authorizationResponseIssParameterSupported == true || parameter("iss") != nil {
            guard parameter("iss") == configuration.issuer else { throw KeywardKitError.signInMismatch("iss is not \(configuration.issuer) (RFC 9207)") }
        }
        if let error = parameter("error") { throw KeywardKitError.signInRefused(code: error, description: parameter("error_description")) }
        guard let code = parameter("code") else { throw KeywardKitError.signInMismatch("the answer carries neither a code nor an error") }
        let issued = try await tokenRequest([
            ("grant_type", "authorization_code"), ("code", code), ("code_verifier", request.codeVerifier),
            ("redirect_uri", base), ("client_id", configuration.clientId),
        ])
        guard let idToken = issued.idToken else { throw KeywardKitError.unexpectedResponse("the token endpoint answered no id_token (is openid among the scopes?)") }
        let claims = try await verifier.verifyIDToken(idToken, clientId: configuration.clientId, nonce: request.nonce, accessToken: issued.accessToken)
        try Self.check(claims, against: request, now: clock())
        let signedIn = SignInTokens(
            accessToken: issued.accessToken, refreshToken: issued.refreshToken, idToken: idToken,
            accessTokenExpiresAt: clock().addingTimeInterval(TimeInterval(issued.expiresIn)), subject: claims["sub"]?.stringValue ?? "",
            authTime: claims["auth_time"]?.numberValue.map { Date(timeIntervalSince1970: $0) },
            amr: claims["amr"]?.arrayValue?.compactMap(\.stringValue) ?? [], acr: claims["acr"]?.stringValue
        )
        cancelRefresh()
        tokens = signedIn
        return signedIn
    }

    /// The id_token shows what the request asked for (OpenID Connect Core §3.1.3.7): a sign-in after the request for
    /// `prompt=login`, one within `max_age`, and one of the `acr_values` asked for. The realm refuses otherwise; the
    /// app checks as well, since it is the app that relies on it.
    static func check(_ claims: JSONObject, against request: SignInRequest, now: Date) throws {
        let leeway: TimeInterval = 60
        let authTime = claims["auth_time"]?.numberValue.map { Date(timeIntervalSince1970: $0) }
        if request.prompt?.split(separator: " ").contains("login") == true, let startedAt = request.startedAt {
            guard let authTime, authTime >= startedAt.addingTimeInterval(-leeway) else {
                throw KeywardKitError.signInMismatch("prompt=login, but the id_token's auth_time is before the request")
            }
        }
        if let maxAge = request.maxAge {
            guard let authTime, now.timeIntervalSince(authTime) <= TimeInterval(maxAge) + leeway else {
                throw KeywardKitError.signInMismatch("the id_token's auth_time is older than max_age \(maxAge) s")
            }
        }
        if let wanted = request.acrValues, !wanted.isEmpty {
            guard let acr = claims["acr"]?.stringValue, wanted.contains(acr) else {
                throw KeywardKitError.signInMismatch("the sign-in reached acr \(claims["acr"]?.stringValue ?? "none"), not one of \(wanted.joined(separator: " "))")
            }
        }
    }

    /// A refresh under way belongs to the sign-in that started it: a new sign-in or a sign-out forgets it.
    private func cancelRefresh() {
        refreshing?.cancel()
        refreshing = nil
    }

    /// RFC 8252 §7.3: a loopback redirect may come back on another port than the registered one names.
    static func sameRedirect(_ received: String, _ expected: String) -> Bool {
        if received == expected { return true }
        guard let got = URLComponents(string: received), let want = URLComponents(string: expected), want.scheme == "http",
            want.host == "127.0.0.1" || want.host == "[::1]" || want.host == "::1"
        else { return false }
        return got.scheme == want.scheme && got.host == want.host && got.path == want.path
    }

    /// A DPoP-bound access token: the one held, or a refreshed one when it is within a minute of expiring.
    public func accessToken() async throws -> String {
        guard let tokens else { throw KeywardKitError.notSignedIn }
        if clock().addingTimeInterval(60) < tokens.accessTokenExpiresAt { return tokens.accessToken }
        return try await refresh().accessToken
    }

    /// Refreshes with the same key: the answer's refresh token replaces the one used, which stops working. Callers
    /// at the same time share one refresh (a second use of the same token would end the sign-in).
    @discardableResult
    public func refresh() async throws -> SignInTokens {
        if let refreshing { return try await refreshing.value }
        let task = Task { try await self.runRefresh() }
        refreshing = task
        defer { if refreshing == task { refreshing = nil } }
        return try await task.value
    }

    private func runRefresh() async throws -> SignInTokens {
        guard var current = tokens, let refreshToken = current.refreshToken else { throw KeywardKitError.notSignedIn }
        let issued = try await tokenRequest([("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", configuration.clientId)])
        // Signed out, or someone else signed in, while the refresh was under way: its answer is not theirs to keep.
        guard tokens?.refreshToken == refreshToken else { throw KeywardKitError.notSignedIn }
        current.accessToken = issued.accessToken
        current.refreshToken = issued.refreshToken ?? refreshToken
        current.accessTokenExpiresAt = clock().addingTimeInterval(TimeInterval(issued.expiresIn))
        tokens = current
        return current
    }

    /// Sends `method url` with the access token and a fresh proof; on a 401, refreshes once and sends again.
    public func send(_ method: String, _ url: String, body: Data? = nil, contentType: String? = nil) async throws -> (Data, HTTPURLResponse) {
        let token = try await accessToken()
        let first = try await endpoint.send(method, url, accessToken: token, body: body, contentType: contentType)
        guard first.1.statusCode == 401 else { return first }
        let fresh = try await refresh().accessToken
        return try await endpoint.send(method, url, accessToken: fresh, body: body, contentType: contentType)
    }

    /// The person's claims from the userinfo endpoint.
    public func userInfo() async throws -> JSONObject {
        guard let url = try await discover().userinfoEndpoint else { throw KeywardKitError.unexpectedResponse("the realm offers no userinfo endpoint") }
        let (data, response) = try await send("GET", url)
        guard response.statusCode == 200 else { throw KeywardKitError.server(status: response.statusCode, code: nil, description: "userinfo") }
        let claims = try StrictJSON.parseObject(Array(data))
        // OpenID Connect Core §5.3.2: the answer is about the person the id_token names, or it is not used.
        guard let subject = tokens?.subject, claims["sub"]?.stringValue == subject else {
            throw KeywardKitError.signInMismatch("userinfo's sub is not the signed-in person's")
        }
        return claims
    }

    /// Signs the app out: revokes its refresh token (RFC 7009), so the sign-in ends on the server, and forgets the
    /// tokens. Returns the realm's RP-initiated logout URL (with the id_token as hint) for an app that also wants to
    /// end the browser's session; open it, or not.
    @discardableResult
    public func signOut() async throws -> URL? {
        guard let current = tokens else { return nil }
        cancelRefresh()
        let metadata = try await discover()
        if let revocation = metadata.revocationEndpoint, let url = URL(string: revocation) {
            var request = URLRequest(url: url)
            request.httpMethod = "POST"
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            let token = current.refreshToken ?? current.accessToken
            request.httpBody = Data(DPoPTokenEndpoint.formBody([("token", token), ("client_id", configuration.clientId)]).utf8)
            let (_, response) = try await session.keywardData(for: request)
            guard response.statusCode == 200 else { throw KeywardKitError.server(status: response.statusCode, code: nil, description: "revocation") }
        }
        tokens = nil
        guard let endSession = metadata.endSessionEndpoint else { return nil }
        var query = [("id_token_hint", current.idToken), ("client_id", configuration.clientId)]
        if let back = configuration.postLogoutRedirectURI { query.append(("post_logout_redirect_uri", back)) }
        return URL(string: endSession + "?" + DPoPTokenEndpoint.formBody(query))
    }

    private func tokenRequest(_ form: [(name: String, value: String)]) async throws -> TokenResponse {
        switch try await endpoint.requestToken(form) {
        case .issued(let token): return token
        case .refused(let status, let body):
            throw KeywardKitError.server(status: status, code: body?.error.rawValue, description: body?.errorDescription)
        }
    }
}
