// Calling providers' token endpoints: code exchanges, token revocation and Graph's JSON, without redirects.
import AsyncHTTPClient
import Foundation
import KeywardJOSE
import NIOCore
import NIOHTTP1

/// Exchanges an authorization code at a provider's token endpoint (RFC 6749 §4.1.3, with the PKCE verifier of RFC
/// 7636 §4.5): its own HTTP client, no redirects (the code and secret go only where the discovery document said),
/// bounded time and body.
final class ProviderTokenClient: Sendable {
    static let maxBodyBytes = 64 * 1024
    private let client: HTTPClient
    private let timeout: TimeAmount

    /// `timeout`: for the whole exchange, the answer's body included.
    init(timeout: TimeAmount = .seconds(10)) {
        client = HTTPClient.outbound(timeout: timeout)
        self.timeout = timeout
    }

    struct Exchange: Sendable {
        var endpoint: String
        var code: String
        var redirectURI: String
        var codeVerifier: String
        var clientId: String
        var clientSecret: String?
        /// `client_secret_post` instead of HTTP Basic.
        var secretInBody: Bool
    }

    /// The token response's `id_token`, and its `refresh_token` when it has one (Apple's, kept to revoke).
    func idToken(_ exchange: Exchange) async throws(SignInFailure) -> (idToken: String, refreshToken: String?) {
        let response = try await tokenResponse(exchange)
        guard let idToken = response.string("id_token") else {
            throw SignInFailure(.codeExchangeFailed, "the provider's token response has no id_token")
        }
        return (idToken, response.string("refresh_token").flatMap { (1...4096).contains($0.utf8.count) ? $0 : nil })
    }

    /// RFC 7009 token revocation with the client's credentials in the form (Apple's `/auth/revoke`); throws unless
    /// the provider answers 200.
    func revoke(endpoint: String, token: String, hint: String, clientId: String, clientSecret: String) async throws(SignInFailure) {
        let form = [("client_id", clientId), ("client_secret", clientSecret), ("token", token), ("token_type_hint", hint)]
        var request = HTTPClientRequest(url: endpoint)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: String.formEncoded(form)))
        let (status, object) = try await send(request, to: "revocation endpoint")
        guard status == .ok else {
            throw SignInFailure(.providerUnavailable, "the provider refused the revocation", detail: Self.errorText(object, status: status))
        }
    }

    /// The token response's `access_token`, for providers without an id_token (Facebook).
    func accessToken(_ exchange: Exchange) async throws(SignInFailure) -> String {
        guard let token = try await tokenResponse(exchange).string("access_token"), (1...4096).contains(token.utf8.count) else {
            throw SignInFailure(.codeExchangeFailed, "the provider's token response has no access_token")
        }
        return token
    }

    private func tokenResponse(_ exchange: Exchange) async throws(SignInFailure) -> JSONObject {
        var form = [
            ("grant_type", "authorization_code"), ("code", exchange.code), ("redirect_uri", exchange.redirectURI),
            ("code_verifier", exchange.codeVerifier), ("client_id", exchange.clientId),
        ]
        var request = HTTPClientRequest(url: exchange.endpoint)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        if let secret = exchange.clientSecret {
            if exchange.secretInBody {
                form.append(("client_secret", secret))
            } else {
                // RFC 6749 §2.3.1: both parts form-encoded before Basic.
                let credentials = exchange.clientId.percentEncodedUnreserved + ":" + secret.percentEncodedUnreserved
                request.headers.add(name: "Authorization", value: "Basic " + Data(credentials.utf8).base64EncodedString())
            }
        }
        request.body = .bytes(ByteBuffer(string: String.formEncoded(form)))
        let (status, object) = try await send(request, to: "token endpoint")
        guard status == .ok, let object else {
            throw SignInFailure(.codeExchangeFailed, "the provider refused the code: \(Self.errorText(object, status: status))")
        }
        return object
    }

    /// A GET answered with JSON (Facebook's Graph calls after the exchange), under the same rules: no redirects,
    /// bounded time and body. The status and the object, when the body is one.
    func getJSON(_ url: String, purpose: String) async throws(SignInFailure) -> (status: HTTPResponseStatus, object: JSONObject?) {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        return try await send(request, to: purpose)
    }

    private func send(_ request: HTTPClientRequest, to purpose: String) async throws(SignInFailure) -> (status: HTTPResponseStatus, object: JSONObject?) {
        do {
            let answer = try await client.executeCollecting(request, deadline: timeout, maxBodyBytes: Self.maxBodyBytes)
            return (answer.status, try? StrictJSON.parseObject(answer.body))
        } catch is HTTPClient.DeadlinePassed {
            throw SignInFailure(.providerUnavailable, "the provider's \(purpose) did not answer in time; try again later")
        } catch {
            throw SignInFailure(.providerUnavailable, "the provider's \(purpose) could not be reached; try again later", detail: "\(error)")
        }
    }

    /// An error answer in a line: OAuth's `error` and `error_description`, or Graph's `{"error": {"message", "code"}}`.
    static func errorText(_ object: JSONObject?, status: HTTPResponseStatus) -> String {
        if let graph = object?["error"]?.objectValue {
            let code = graph["code"]?.numberValue.flatMap { Int(exactly: $0) }.map { " (code \($0))" } ?? ""
            return (graph.string("message").map { String($0.prefix(200)) } ?? "HTTP \(status.code)") + code
        }
        let error = object?.string("error").map { String($0.prefix(64)) } ?? "HTTP \(status.code)"
        let description = object?.string("error_description").map { " (\(String($0.prefix(200))))" } ?? ""
        return error + description
    }

    func shutdown() async {
        try? await client.shutdown()
    }
}
