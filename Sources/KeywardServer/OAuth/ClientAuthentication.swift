// Who is calling the token endpoint or pushing an authorization request: the client and how it proved it.
import Foundation
import KeywardHTTPInput

/// Client identification at the endpoints a client calls directly (the token endpoint, pushed authorization
/// requests): `client_secret_basic` or `client_secret_post` for a confidential client, `client_id` alone for a
/// public one, which the caller then holds to what a public client may do.
struct ClientAuthentication: Sendable {
    let clients: ClientService

    /// client_secret_basic or client_secret_post, never both (RFC 6749 §2.3); a public client by its `client_id`
    /// alone (RFC 6749 §2.1), which the caller then holds to what a public client may do.
    func identify(form: [String: String], authorization: [String], realm: String) async throws -> OAuthClient {
        let basic = try BasicCredentials.parse(authorization)
        let post = (id: form["client_id"], secret: form["client_secret"])
        let clientId: String
        let secret: String
        if let basic {
            guard post.secret == nil else { throw OAuthFailure.invalidRequest("use one client authentication method: Authorization header or client_secret, not both") }
            if let postId = post.id, postId != basic.username { throw OAuthFailure.invalidRequest("client_id does not match the Authorization header") }
            (clientId, secret) = (basic.username, basic.password)
        } else {
            guard let id = post.id else {
                throw OAuthFailure(status: 401, code: .invalidClient, description: "client authentication required (client_secret_basic or client_secret_post)", challenge: "Basic realm=\"\(realm)\"")
            }
            guard let postSecret = post.secret else {
                if let client = try await clients.client(realm: realm, clientId: id), client.isPublic { return client }
                throw OAuthFailure(status: 401, code: .invalidClient, description: "client_secret is required for confidential clients")
            }
            (clientId, secret) = (id, postSecret)
        }
        guard let client = try await clients.authenticate(realm: realm, clientId: clientId, secret: secret) else {
            throw OAuthFailure(
                status: 401, code: .invalidClient, description: "client authentication failed",
                challenge: basic == nil ? nil : "Basic realm=\"\(realm)\""
            )
        }
        return client
    }
}

/// `Authorization: Basic` client credentials (RFC 6749 §2.3.1: both parts form-urlencoded).
struct BasicCredentials: Equatable {
    let username: String
    let password: String

    static func parse(_ headers: [String]) throws(OAuthFailure) -> BasicCredentials? {
        guard !headers.isEmpty else { return nil }
        guard headers.count == 1 else { throw OAuthFailure.invalidRequest("more than one Authorization header") }
        let value = headers[0]
        guard value.count > 6, value.prefix(6).lowercased() == "basic " else {
            throw OAuthFailure(status: 401, code: .invalidClient, description: "the token endpoint accepts only Basic client authentication in the Authorization header")
        }
        guard let decoded = Data(base64Encoded: String(value.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
            let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":"),
            let username = FormBody.decodeComponent(text[..<colon]),
            let password = FormBody.decodeComponent(text[text.index(after: colon)...])
        else {
            throw OAuthFailure(status: 401, code: .invalidClient, description: "malformed Basic credentials")
        }
        return BasicCredentials(username: username, password: password)
    }
}
