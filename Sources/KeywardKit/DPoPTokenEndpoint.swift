// What every DPoP-bound grant shares: the form POST to a realm's token endpoint with a proof, the one retry with
// the server's nonce, and calls to protected resources with a fresh proof. TokenClient (client credentials) and
// HostTokenSession (RFC 7523 jwt-bearer) are both built on it.
import Foundation
import KeywardJOSE
import KeywardWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct DPoPTokenEndpoint: Sendable {
    /// What the token endpoint answered: a token, or a refusal with its RFC 6749 §5.2 body when it sent one.
    enum Answer: Sendable {
        case issued(TokenResponse)
        case refused(status: Int, body: OAuthErrorBody?)
    }

    /// The realm's issuer URL without a trailing slash.
    let issuer: String
    let signer: DPoPSigner
    let session: URLSession

    init(issuer: String, signer: DPoPSigner, session: URLSession) {
        self.issuer = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        self.signer = signer
        self.session = session
    }

    /// `{issuer}/protocol/openid-connect/token`, where Keyward's realms answer every grant.
    var url: String { issuer + "/protocol/openid-connect/token" }

    /// Posts `parameters` as a form (RFC 6749 Appendix B) with a DPoP proof. When the server answers
    /// `use_dpop_nonce` with a `DPoP-Nonce` header, the same form goes again once with a proof carrying that nonce
    /// (RFC 9449 §8); a second demand is an error, not a loop.
    func requestToken(_ parameters: [(name: String, value: String)], extraProofClaims: JSONObject = [:]) async throws -> Answer {
        let body = Data(Self.formBody(parameters).utf8)
        var nonce: String?
        for _ in 0..<2 {
            var request = try makeRequest(url, method: "POST")
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.setValue(try signer.proof(method: "POST", url: url, nonce: nonce, extraClaims: extraProofClaims), forHTTPHeaderField: "DPoP")
            request.httpBody = body
            let (data, response) = try await session.keywardData(for: request)
            if response.statusCode == 200 { return .issued(try JSONDecoder().decode(TokenResponse.self, from: data)) }
            let error = try? JSONDecoder().decode(OAuthErrorBody.self, from: data)
            if error?.error == .useDPoPNonce, nonce == nil, let serverNonce = response.value(forHTTPHeaderField: "DPoP-Nonce") {
                nonce = serverNonce
                continue
            }
            return .refused(status: response.statusCode, body: error)
        }
        throw KeywardKitError.unexpectedResponse("server asked for a new DPoP nonce twice")
    }

    /// Sends `method url` with `Authorization: DPoP <token>` and a fresh proof carrying `ath` (RFC 9449 §7).
    func send(_ method: String, _ url: String, accessToken: String, body: Data?, contentType: String?) async throws -> (Data, HTTPURLResponse) {
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

    /// `name=value` pairs joined by `&`, each encoded (`formEncode`): a form body or a URL's query.
    static func formBody(_ parameters: [(name: String, value: String)]) -> String {
        parameters.map { formEncode($0.name) + "=" + formEncode($0.value) }.joined(separator: "&")
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters, so `+`, `&` and `=` in a value survive the
    /// form (RFC 6749 Appendix B).
    static func formEncode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}
