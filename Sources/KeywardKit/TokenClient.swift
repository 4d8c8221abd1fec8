// Getting DPoP-bound access tokens with the client-credentials grant and calling protected resources.
import Foundation
import KeywardJOSE
import KeywardWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Obtains DPoP-bound access tokens with the client-credentials grant and calls DPoP-protected resources.
public struct TokenClient: Sendable {
    /// The realm's issuer URL, `https://HOST/realms/NAME`, without a trailing slash.
    public var issuer: String { endpoint.issuer }
    /// The OAuth client the tokens are requested for.
    public let clientId: String
    /// That client's secret, sent in the form body (`client_secret_post`).
    public let clientSecret: String
    /// Signs the DPoP proofs; the tokens are bound to its key.
    public var signer: DPoPSigner { endpoint.signer }
    private let endpoint: DPoPTokenEndpoint

    /// A client of the realm at `issuer` (a trailing slash is dropped); `session` carries the requests.
    public init(issuer: String, clientId: String, clientSecret: String, signer: DPoPSigner, session: URLSession = .shared) {
        self.endpoint = DPoPTokenEndpoint(issuer: issuer, signer: signer, session: session)
        self.clientId = clientId
        self.clientSecret = clientSecret
    }

    /// The realm's token endpoint, `{issuer}/protocol/openid-connect/token`.
    public var tokenEndpoint: String { endpoint.url }

    /// Requests a token; retries once with the server's nonce when it answers `use_dpop_nonce`.
    public func clientCredentials(scope: String? = nil, extraProofClaims: JSONObject = [:]) async throws -> TokenResponse {
        var form = [(name: "grant_type", value: "client_credentials"), ("client_id", clientId), ("client_secret", clientSecret)]
        if let scope { form.append(("scope", scope)) }
        switch try await endpoint.requestToken(form, extraProofClaims: extraProofClaims) {
        case .issued(let token):
            return token
        case .refused(let status, let body):
            throw KeywardKitError.server(status: status, code: body?.error.rawValue, description: body?.errorDescription)
        }
    }

    /// Sends `method url` with `Authorization: DPoP <token>` and a fresh proof carrying `ath`.
    public func send(_ method: String, _ url: String, accessToken: String, body: Data? = nil, contentType: String? = nil) async throws -> (Data, HTTPURLResponse) {
        try await endpoint.send(method, url, accessToken: accessToken, body: body, contentType: contentType)
    }
}
