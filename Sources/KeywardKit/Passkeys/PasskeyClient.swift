// A realm's passkey endpoints from an app: the sign-in state's cookie, the options, the ceremony, the answer.
import Foundation
import KeywardJOSE
import KeywardWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Signs a person in with a passkey, and adds passkeys to their account, through a realm's JSON endpoints
/// (`/realms/{realm}/webauthn/…`). The realm's cookies are kept here, as a browser keeps them: the first call gets
/// a sign-in state, the sign-in a session (``sessionCookie``), which an app hands to its web view or uses for the
/// account's JSON API.
///
/// ```swift
/// let client = PasskeyClient(issuer: "https://login.example.com/realms/shop", authenticator: PlatformPasskeyAuthenticator(anchor: window))
/// let signedIn = try await client.signIn()          // usernameless: the platform offers this site's passkeys
/// ```
public actor PasskeyClient {
    public nonisolated let issuer: String
    /// The realm's origin, which a browser would write into the client data (scheme, host and port of `issuer`).
    public nonisolated let origin: String
    private let authenticator: any PasskeyAuthenticator
    private let session: URLSession
    private var cookies: [String: String] = [:]
    private var csrf: String?

    public init(issuer: String, authenticator: any PasskeyAuthenticator) throws {
        let trimmed = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        guard let parts = URLComponents(string: trimmed), let scheme = parts.scheme, let host = parts.host else { throw KeywardKitError.invalidURL(issuer) }
        self.issuer = trimmed
        self.origin = "\(scheme)://\(host)" + (parts.port.map { ":\($0)" } ?? "")
        self.authenticator = authenticator
        // Redirects are answers here (where a sign-in goes next), not hops to follow; cookies are kept by hand.
        self.session = URLSession(configuration: .ephemeral, delegate: NoRedirects(), delegateQueue: nil)
    }

    /// The browser session's cookie once a sign-in completed (`name=value`).
    public var sessionCookie: String? {
        cookies.first { $0.key.hasSuffix("keyward-session") && !$0.value.hasPrefix("p1.") }.map { "\($0.key)=\($0.value)" }
    }

    /// Signs in with a passkey: without `username` the authenticator offers any of its passkeys for the realm's RP
    /// ID; with one, that account's. Returns where the sign-in goes next and how it was made (`amr`).
    public func signIn(username: String? = nil) async throws -> PasskeySignInResponse {
        let body = try JSONEncoder().encode(["username": username].compactMapValues { $0 })
        let (optionsData, optionsResponse) = try await post("webauthn/authentication/options", json: body)
        if let token = optionsResponse.value(forHTTPHeaderField: "X-CSRF-Token") { csrf = token }
        let options = try Self.decode(PublicKeyCredentialRequestOptionsJSON.self, optionsData, optionsResponse)
        let credential = try await authenticator.get(options, origin: origin)
        let (answer, response) = try await post("webauthn/authentication", json: try JSONEncoder().encode(credential))
        return try Self.decode(PasskeySignInResponse.self, answer, response)
    }

    /// Adds a passkey to the account this client is signed in to (a sign-in within the last minutes).
    public func register(name: String? = nil) async throws -> RegisteredPasskey {
        let (sessionData, sessionResponse) = try await get("v1/auth/session")
        guard sessionResponse.statusCode == 200, let object = try? StrictJSON.parseObject(Array(sessionData)),
            let token = object["csrf_token"]?.stringValue
        else { throw KeywardKitError.notSignedIn }
        csrf = token
        let (optionsData, optionsResponse) = try await post("webauthn/registration/options", json: Data("{}".utf8))
        let options = try Self.decode(PublicKeyCredentialCreationOptionsJSON.self, optionsData, optionsResponse)
        let credential = try await authenticator.create(options, origin: origin)
        var body = try StrictJSON.parseObject(Array(try JSONEncoder().encode(credential)))
        if let name { body["name"] = .string(name) }
        let (answer, response) = try await post("webauthn/registration", json: Data(StrictJSON.serialize(body)))
        return try Self.decode(RegisteredPasskey.self, answer, response)
    }

    /// Signs in with a username and password through the sign-in page's form — for a demo or a test account, before
    /// adding a passkey. Throws ``KeywardKitError/secondStepRequired(next:)`` when the realm asks for a second step.
    public func signInWithPassword(username: String, password: String) async throws {
        let (page, _) = try await get("login")
        let html = String(decoding: page, as: UTF8.self)
        guard let range = html.range(of: #"name="csrf" value="([^"]+)""#, options: .regularExpression) else {
            throw KeywardKitError.unexpectedResponse("the sign-in page carries no form token")
        }
        let token = html[range].dropFirst(#"name="csrf" value=""#.count).dropLast()
        var request = try request("login", method: "POST")
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(DPoPTokenEndpoint.formBody([("csrf", String(token)), ("username", username), ("password", password)]).utf8)
        let (_, response) = try await send(request)
        guard response.statusCode == 303, let next = response.value(forHTTPHeaderField: "Location") else {
            throw KeywardKitError.signInRefused(code: "invalid_credentials", description: "the realm answered the password with \(response.statusCode)")
        }
        if next.contains("/login/") { throw KeywardKitError.secondStepRequired(next: next) }
    }

    // MARK: HTTP

    private func request(_ path: String, method: String) throws -> URLRequest {
        guard let url = URL(string: issuer + "/" + path) else { throw KeywardKitError.invalidURL(issuer + "/" + path) }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpShouldHandleCookies = false
        if !cookies.isEmpty { request.setValue(cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; "), forHTTPHeaderField: "Cookie") }
        return request
    }

    private func get(_ path: String) async throws -> (Data, HTTPURLResponse) {
        try await send(try request(path, method: "GET"))
    }

    private func post(_ path: String, json: Data) async throws -> (Data, HTTPURLResponse) {
        var request = try request(path, method: "POST")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let csrf { request.setValue(csrf, forHTTPHeaderField: "X-CSRF-Token") }
        request.httpBody = json
        return try await send(request)
    }

    private func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await session.keywardData(for: request)
        for field in response.allHeaderFields where (field.key as? String)?.lowercased() == "set-cookie" {
            for cookie in "\(field.value)".components(separatedBy: ",") { remember(cookie) }
        }
        return (data, response)
    }

    /// `name=value; Path=/; …`: the pair kept, an expired or emptied cookie dropped.
    private func remember(_ header: String) {
        guard let pair = header.split(separator: ";").first, let equals = pair.firstIndex(of: "=") else { return }
        let name = pair[..<equals].trimmingCharacters(in: .whitespaces)
        let value = String(pair[pair.index(after: equals)...])
        if value.isEmpty || header.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = value }
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ data: Data, _ response: HTTPURLResponse) throws -> T {
        guard (200..<300).contains(response.statusCode) else {
            let object = try? StrictJSON.parseObject(Array(data))
            throw KeywardKitError.passkeyRefused(
                status: response.statusCode, code: object?["error"]?.stringValue, reason: object?["reason"]?.stringValue,
                description: object?["message"]?.stringValue
            )
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw KeywardKitError.unexpectedResponse("the realm's passkey answer is not a \(T.self)")
        }
    }
}

/// Hands a redirect back as the answer instead of following it.
private final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    // The completion-handler form: Linux's Foundation calls only this one.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
