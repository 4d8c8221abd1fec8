// Tests: unauthenticated request text never adds a new metric series, so /metrics cannot grow without bound.
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
@testable import KeywardServer
import XCTest

/// Metric labels come from closed sets: unauthenticated request text (a proof's `alg`, an HTTP method, a
/// path) must never create a new series, or anyone could grow `/metrics` and the server's memory without bound.
final class MetricCardinalityTests: XCTestCase {
    func testAThousandDistinctProofAlgorithmsAddNoSeries() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let url = device.base + "/login/pending"
            func refuse(alg: String) async throws {
                let header: JSONObject = ["typ": "dpop+jwt", "alg": .string(alg), "jwk": .object(device.key.publicJWK.requiredMembers)]
                let claims: JSONObject = [
                    "jti": .string(UUID().uuidString), "htm": "GET", "htu": .string(url), "iat": .number(server.clock.now().timeIntervalSince1970.rounded(.down)),
                    "sub": .string(device.userId), "deviceId": .string(device.deviceId),
                ]
                let proof = Base64URL.encode(StrictJSON.serialize(header)) + "." + Base64URL.encode(StrictJSON.serialize(claims)) + ".c2ln"
                let answer = try await client.push(
                    "/login/pending?userId=\(device.userId)", method: .get,
                    headers: [.authorization: "DPoP " + token, HTTPField.Name("DPoP")!: proof]
                )
                XCTAssertEqual(answer.status, .badRequest, answer.body)
            }
            try await refuse(alg: "XS0")
            let before = try await Self.seriesCount(client)
            for index in 1...1000 { try await refuse(alg: "XS\(index)") }
            let after = try await Self.seriesCount(client)
            XCTAssertEqual(after, before, "1,000 distinct proof algorithms must not add metric series")
        }
    }

    func testUnknownMethodsAndPathsAddNoSeries() async throws {
        try await TestServer.forEachEngine { _, client in
            _ = try await client.execute(uri: "/no-such-path-0", method: HTTPRequest.Method("FOO0")!) { $0.status }
            let before = try await Self.seriesCount(client)
            for index in 1...100 {
                _ = try await client.execute(uri: "/no-such-path-\(index)", method: HTTPRequest.Method("FOO\(index)")!) { $0.status }
            }
            let after = try await Self.seriesCount(client)
            XCTAssertEqual(after, before)
        }
    }

    /// Sample lines of the Prometheus text format (comments excluded), each one series.
    static func seriesCount(_ client: any TestClientProtocol) async throws -> Int {
        let text = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
        // The scrape itself is counted under its own route; leave that family out so scrapes compare equal.
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.contains("route=\"/metrics\"") }.count
    }
}
