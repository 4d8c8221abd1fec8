// The basic benchmark workloads: the token endpoint and a DPoP-protected resource on the demo realm.
import Foundation
import KeywardJOSE

/// The measured workloads, against the demo realm and its `push-device-client`.
struct Scenarios {
    let baseURL: String
    let port: Int
    let requests: Int
    let log: (String) -> Void

    private var tokenPath: String { "/realms/demo/protocol/openid-connect/token" }
    private var whoamiPath: String { "/realms/demo/v1/whoami" }
    private static let form = "grant_type=client_credentials&client_id=push-device-client&client_secret=device-client-secret"

    private func tokenRequest(key: SigningKey) throws -> [UInt8] {
        let proof = try DPoPProof.make(key: key, method: "POST", url: baseURL + tokenPath, issuedAt: Date())
        return RawHTTPConnection.request(
            method: "POST", path: tokenPath, port: port,
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("DPoP", proof)], body: Self.form
        )
    }

    /// client_credentials + DPoP: one proof verification, one replay insert, one token signature each.
    func tokenEndpoint() throws -> PreparedLoad {
        let key = try SigningKey.generate(.es256)
        log("token endpoint: preparing \(requests) DPoP proofs")
        let prepared = try (0..<requests).map { _ in try tokenRequest(key: key) }
        return PreparedLoad(name: "token (client_credentials + DPoP)", requests: prepared, expecting: 200)
    }

    /// GET /v1/whoami with a DPoP-bound ES256 access token: token check, proof check, replay insert each.
    func protectedResource() throws -> PreparedLoad {
        let key = try SigningKey.generate(.es256)
        let answer = try RawHTTPConnection(port: port).send(try tokenRequest(key: key))
        guard answer.status == 200, let token = try? StrictJSON.parseObject(answer.body)["access_token"]?.stringValue else {
            throw BenchError("could not obtain an access token: \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
        }
        log("protected resource: preparing \(requests) DPoP proofs")
        let prepared = try (0..<requests).map { _ in
            let proof = try DPoPProof.make(key: key, method: "GET", url: baseURL + whoamiPath, issuedAt: Date(), accessToken: token)
            return RawHTTPConnection.request(method: "GET", path: whoamiPath, port: port, headers: [("Authorization", "DPoP " + token), ("DPoP", proof)])
        }
        return PreparedLoad(name: "DPoP-protected GET /v1/whoami", requests: prepared, expecting: 200)
    }
}
