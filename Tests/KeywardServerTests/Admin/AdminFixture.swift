// Test support: an admin client of a realm with a DPoP key, calling the admin API with a fresh proof each time.
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
import KeywardServer
import NIOCore
import XCTest

/// One admin API client: its realm, id and secret, its DPoP key and the token it got with them.
struct AdminClient: Sendable {
    let server: TestServer
    let client: any TestClientProtocol
    let realm: String
    let clientId: String
    let key: SigningKey
    let token: String

    /// A confidential client of `realm` holding `scopes` (the realm created first when it does not exist), and its token.
    static func make(
        _ server: TestServer, _ client: any TestClientProtocol, realm: String = "demo", clientId: String = "ops", scopes: Set<AdminScope>,
        requestedScope: String? = nil
    ) async throws -> AdminClient {
        if try await server.runtime.oauth.realms.realm(named: realm) == nil {
            _ = try await server.runtime.oauth.realms.createRealm(name: realm)
        }
        let (_, secret) = try await server.runtime.oauth.clients.createClient(realm: realm, clientId: clientId, adminScopes: scopes)
        let key = try SigningKey.generate(.es256)
        let token = try await Self.token(server, client, realm: realm, clientId: clientId, secret: secret, key: key, scope: requestedScope)
        return AdminClient(server: server, client: client, realm: realm, clientId: clientId, key: key, token: token)
    }

    static func token(
        _ server: TestServer, _ client: any TestClientProtocol, realm: String, clientId: String, secret: String, key: SigningKey, scope: String? = nil
    ) async throws -> String {
        let path = "/realms/\(realm)/protocol/openid-connect/token"
        var headers = HTTPFields.form()
        headers.append(HTTPField(name: .init("DPoP")!, value: try DPoPProof.make(key: key, method: "POST", url: TestServer.publicURL + path, issuedAt: server.clock.now())))
        var body = "grant_type=client_credentials&client_id=\(clientId)&client_secret=\(secret)"
        if let scope { body += "&scope=" + scope.replacingOccurrences(of: " ", with: "+").replacingOccurrences(of: ":", with: "%3A") }
        let json = try await client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: body)) { response in
            try StrictJSON.parseObject(response.body.readableBytesView)
        }
        return try XCTUnwrap(json["access_token"]?.stringValue, "token refused: \(json)")
    }

    struct Answer {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let json: JSONObject
        var code: String? { json["code"]?.stringValue }
        var etag: String? { headers[.eTag] }
    }

    /// Calls the admin API with this client's token and a fresh proof (or the ones given).
    func call(
        _ method: HTTPRequest.Method, _ path: String, json: JSONObject? = nil, body: String? = nil, headers extra: HTTPFields = [:],
        proof: String? = nil, token: String? = nil
    ) async throws -> Answer {
        let target = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        var headers: HTTPFields = [.authorization: "DPoP " + (token ?? self.token)]
        headers.append(HTTPField(
            name: .init("DPoP")!,
            value: try proof ?? DPoPProof.make(key: key, method: method.rawValue, url: TestServer.publicURL + target, issuedAt: server.clock.now(), accessToken: token ?? self.token)
        ))
        var bytes: ByteBuffer?
        if let json {
            headers[.contentType] = "application/json"
            bytes = ByteBuffer(bytes: StrictJSON.serialize(.object(json)))
        } else if let body {
            bytes = ByteBuffer(string: body)
        }
        for field in extra { headers[field.name] = field.value }
        return try await client.execute(uri: path, method: method, headers: headers, body: bytes) { response in
            Answer(status: response.status, headers: response.headers, json: (try? StrictJSON.parseObject(response.body.readableBytesView)) ?? [:])
        }
    }
}
