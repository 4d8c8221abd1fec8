// Test support: an in-process Keyward on a fresh SQLite or PostgreSQL database, demo realm seeded, movable clock.
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KeywardJOSE
import NIOCore
import KeywardServer
import Logging
import XCTest

/// A Keyward runtime on a fresh database of the given engine, seeded with the demo realm, driven in-process
/// through HummingbirdTesting's router client.
struct TestServer: Sendable {
    static let publicURL = "http://keyward.test"
    let runtime: KeywardRuntime
    let clock: TestClock

    var tokenURL: String { Self.publicURL + "/realms/demo/protocol/openid-connect/token" }
    var whoamiURL: String { Self.publicURL + "/realms/demo/v1/whoami" }

    /// Runs `body` once per engine (SQLite always; PostgreSQL when configured), each on a fresh database;
    /// `engines` narrows that to the engines a test is about.
    static func forEachEngine(
        engines: Set<DatabaseEngine> = [.sqlite, .postgres],
        file: StaticString = #filePath, line: UInt = #line,
        configure: (inout KeywardConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (TestServer, any TestClientProtocol) async throws -> Void
    ) async throws {
        for engine in try TestDatabase.enginesUnderTest() where engines.contains(engine) {
            try await TestDatabase.withFreshDatabase(engine) { databaseURL, dataDirectory in
                var configuration = KeywardConfiguration()
                configuration.publicURL = publicURL
                configuration.dataDirectory = dataDirectory
                configuration.databaseURL = databaseURL
                configuration.bcryptCost = 4
                configure(&configuration)
                configuration.masterKey = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
                let clock = TestClock()
                var logger = Logger(label: "keyward-test")
                logger.logLevel = .warning
                let runtime = try await KeywardRuntime.start(configuration: configuration, logger: logger, clock: clock)
                do {
                    _ = try await runtime.seedDemo()
                    let server = TestServer(runtime: runtime, clock: clock)
                    let app = Application(router: runtime.makeRouter())
                    try await app.test(.router) { client in
                        do {
                            try await body(server, client)
                        } catch {
                            XCTFail("[\(engine)] \(error)", file: file, line: line)
                            throw error
                        }
                    }
                    try await runtime.shutdown()
                } catch {
                    try? await runtime.shutdown()
                    throw error
                }
            }
        }
    }

    /// Runs `body` with a second node on the same database and clock (another process behind the same proxy), driven
    /// through its own router client, and shuts it down afterwards.
    func withSecondNode(_ body: @Sendable (KeywardRuntime, any TestClientProtocol) async throws -> Void) async throws {
        var logger = Logger(label: "node-b")
        logger.logLevel = .warning
        let nodeB = try await KeywardRuntime.start(configuration: runtime.configuration, logger: logger, clock: clock)
        do {
            try await Application(router: nodeB.makeRouter()).test(.router) { clientB in try await body(nodeB, clientB) }
            try await nodeB.shutdown()
        } catch {
            try? await nodeB.shutdown()
            throw error
        }
    }

    /// A DPoP proof for the token endpoint, signed by `key`, dated by the server's clock.
    func tokenProof(_ key: SigningKey, url: String? = nil, method: String = "POST", extraClaims: JSONObject = [:]) throws -> String {
        try DPoPProof.make(key: key, method: method, url: url ?? tokenURL, issuedAt: clock.now(), extraClaims: extraClaims)
    }

    func resourceProof(_ key: SigningKey, token: String, url: String? = nil, method: String = "GET") throws -> String {
        try DPoPProof.make(key: key, method: method, url: url ?? whoamiURL, issuedAt: clock.now(), accessToken: token)
    }
}

extension HTTPFields {
    static func form() -> HTTPFields { [.contentType: "application/x-www-form-urlencoded"] }
}

enum Form {
    static let demoClient = "grant_type=client_credentials&client_id=push-device-client&client_secret=device-client-secret"
}

extension TestClientProtocol {
    /// POSTs to the demo token endpoint with the given proofs and body; returns status and parsed JSON.
    func requestToken(
        body: String = Form.demoClient, proofs: [String], extraHeaders: HTTPFields = [:]
    ) async throws -> (status: HTTPResponse.Status, json: JSONObject, headers: HTTPFields) {
        var headers = HTTPFields.form()
        headers.append(contentsOf: extraHeaders)
        for proof in proofs { headers.append(HTTPField(name: .init("DPoP")!, value: proof)) }
        return try await execute(uri: "/realms/demo/protocol/openid-connect/token", method: .post, headers: headers, body: ByteBuffer(string: body)) { response in
            (response.status, (try? StrictJSON.parseObject(response.body.readableBytesView)) ?? [:], response.headers)
        }
    }

    /// A DPoP-bound token for `key` from the demo client; fails the test when refused.
    func demoToken(_ server: TestServer, key: SigningKey) async throws -> String {
        let answer = try await requestToken(proofs: [try server.tokenProof(key)])
        XCTAssertEqual(answer.status, .ok, "token request refused: \(answer.json)")
        return try XCTUnwrap(answer.json["access_token"]?.stringValue)
    }

    func whoami(authorization: [String], proofs: [String]) async throws -> (status: HTTPResponse.Status, json: JSONObject, headers: HTTPFields) {
        var headers = HTTPFields()
        for value in authorization { headers.append(HTTPField(name: .authorization, value: value)) }
        for proof in proofs { headers.append(HTTPField(name: .init("DPoP")!, value: proof)) }
        return try await execute(uri: "/realms/demo/v1/whoami", method: .get, headers: headers) { response in
            (response.status, (try? StrictJSON.parseObject(response.body.readableBytesView)) ?? [:], response.headers)
        }
    }
}
