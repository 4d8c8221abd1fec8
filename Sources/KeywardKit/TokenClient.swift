import Foundation
import KeywardJOSE
import KeywardWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Obtains DPoP-bound access tokens with the client-credentials grant and calls DPoP-protected resources.
public struct TokenClient: Sendable {
    /// The realm's issuer URL, `https://HOST/realms/NAME`, without a trailing slash.
    public let issuer: String
    /// The OAuth client the tokens are requested for.
    public let clientId: String
    /// That client's secret, sent in the form body (`client_secret_post`).
    public let clientSecret: String
    /// Signs the DPoP proofs; the tokens are bound to its key.
    public let signer: DPoPSigner
    private let session: URLSession

    /// A client of the realm at `issuer` (a trailing slash is dropped); `session` carries the requests.
    public init(issuer: String, clientId: String, clientSecret: String, signer: DPoPSigner, session: URLSession = .shared) {
        self.issuer = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        self.clientId = clientId
        self.clientSecret = clientSecret
        self.signer = signer
        self.session = session
    }

    /// The realm's token endpoint, `{issuer}/protocol/openid-connect/token`.
    public var tokenEndpoint: String { issuer + "/protocol/openid-connect/token" }

    /// Requests a token; retries once with the server's nonce when it answers `use_dpop_nonce`.
    public func clientCredentials(scope: String? = nil, extraProofClaims: JSONObject = [:]) async throws -> TokenResponse {
        var nonce: String?
        for _ in 0..<2 {
            var request = try makeRequest(tokenEndpoint, method: "POST")
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.setValue(try signer.proof(method: "POST", url: tokenEndpoint, nonce: nonce, extraClaims: extraProofClaims), forHTTPHeaderField: "DPoP")
            var form = "grant_type=client_credentials&client_id=\(Self.formEncode(clientId))&client_secret=\(Self.formEncode(clientSecret))"
            if let scope { form += "&scope=\(Self.formEncode(scope))" }
            request.httpBody = Data(form.utf8)
            let (data, response) = try await session.keywardData(for: request)
            let status = response.statusCode
            if status == 200 { return try JSONDecoder().decode(TokenResponse.self, from: data) }
            let error = try? JSONDecoder().decode(OAuthErrorBody.self, from: data)
            if error?.error == .useDPoPNonce, nonce == nil, let serverNonce = response.value(forHTTPHeaderField: "DPoP-Nonce") {
                nonce = serverNonce
                continue
            }
            throw KeywardKitError.server(status: status, code: error?.error.rawValue, description: error?.errorDescription)
        }
        throw KeywardKitError.unexpectedResponse("server asked for a new DPoP nonce twice")
    }

    /// Sends `method url` with `Authorization: DPoP <token>` and a fresh proof carrying `ath`.
    public func send(_ method: String, _ url: String, accessToken: String, body: Data? = nil, contentType: String? = nil) async throws -> (Data, HTTPURLResponse) {
        var request = try makeRequest(url, method: method)
        request.setValue("DPoP " + accessToken, forHTTPHeaderField: "Authorization")
        request.setValue(try signer.proof(method: method, url: url, accessToken: accessToken), forHTTPHeaderField: "DPoP")
        if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        request.httpBody = body
        return try await session.keywardData(for: request)
    }

    private func makeRequest(_ url: String, method: String) throws -> URLRequest {
        guard let parsed = URL(string: url) else { throw KeywardKitError.invalidURL(url) }
        var request = URLRequest(url: parsed)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        return request
    }

    static func formEncode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}
