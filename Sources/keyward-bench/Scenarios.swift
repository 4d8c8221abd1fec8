import AsyncHTTPClient
import Foundation
import KeywardJOSE
import NIOCore
import NIOHTTP1

/// The measured workloads, against the demo realm and its `push-device-client`.
struct Scenarios {
    let baseURL: String
    let requests: Int
    let concurrency: Int
    let log: (String) -> Void
    let client: HTTPClient

    init(baseURL: String, requests: Int, concurrency: Int, log: @escaping (String) -> Void) {
        self.baseURL = baseURL
        self.requests = requests
        self.concurrency = concurrency
        self.log = log
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: concurrency)
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    private var tokenURL: String { baseURL + "/realms/demo/protocol/openid-connect/token" }
    private var whoamiURL: String { baseURL + "/realms/demo/v1/whoami" }
    private static let form = "grant_type=client_credentials&client_id=push-device-client&client_secret=device-client-secret"

    private func tokenRequest(key: SigningKey) throws -> HTTPClientRequest {
        var request = HTTPClientRequest(url: tokenURL)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "DPoP", value: try DPoPProof.make(key: key, method: "POST", url: tokenURL, issuedAt: Date()))
        request.body = .bytes(ByteBuffer(string: Self.form))
        return request
    }

    /// client_credentials + DPoP: one proof verification, one replay insert, one token signature each.
    func tokenEndpoint() async throws -> ScenarioResult {
        let key = try SigningKey.generate(.es256)
        log("token endpoint: preparing \(requests) DPoP proofs")
        let prepared = try (0..<requests).map { _ in try tokenRequest(key: key) }
        try await warmUp()
        log("token endpoint: \(requests) requests over \(concurrency) connections")
        let outcome = await LoadRunner(client: client, concurrency: concurrency).run(prepared, expecting: .ok)
        return ScenarioResult(name: "token (client_credentials + DPoP)", outcome: outcome)
    }

    /// GET /v1/whoami with a DPoP-bound ES256 access token: two verifications and one replay insert each.
    func protectedResource() async throws -> ScenarioResult {
        let key = try SigningKey.generate(.es256)
        let response = try await client.execute(try tokenRequest(key: key), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok, let object = try? StrictJSON.parseObject(body.readableBytesView), let token = object["access_token"]?.stringValue else {
            throw BenchError("could not obtain an access token: \(response.status.code) \(String(buffer: body))")
        }
        log("protected resource: preparing \(requests) DPoP proofs")
        let prepared = try (0..<requests).map { _ in
            var request = HTTPClientRequest(url: whoamiURL)
            request.headers.add(name: "Authorization", value: "DPoP " + token)
            request.headers.add(name: "DPoP", value: try DPoPProof.make(key: key, method: "GET", url: whoamiURL, issuedAt: Date(), accessToken: token))
            return request
        }
        log("protected resource: \(requests) requests over \(concurrency) connections")
        let outcome = await LoadRunner(client: client, concurrency: concurrency).run(prepared, expecting: .ok)
        return ScenarioResult(name: "DPoP-protected GET /v1/whoami", outcome: outcome)
    }

    /// Opens the connections before timing starts.
    private func warmUp() async throws {
        let key = try SigningKey.generate(.es256)
        let warm = try (0..<(concurrency * 4)).map { _ in try tokenRequest(key: key) }
        _ = await LoadRunner(client: client, concurrency: concurrency).run(warm, expecting: .ok)
    }

    func shutdown() async throws { try await client.shutdown() }
}
