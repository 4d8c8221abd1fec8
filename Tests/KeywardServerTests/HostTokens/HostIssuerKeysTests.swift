// Tests: a JWKS host-token issuer's keys are cached, refetched on unknown kids at most every 10 s, kept when down.
import Foundation
import HTTPTypes
import KeywardJOSE
import KeywardServer
import XCTest

/// A JWKS issuer's keys as a running node sees them: cached as Cache-Control says, refetched once on an unknown
/// kid (at most every 10 s), and kept when the issuer's endpoint is down.
final class HostIssuerKeysTests: XCTestCase {
    func testARotatedKeyIsPickedUpWithoutARestartAndUnknownKidsRefetchAtMostOnceInTenSeconds() async throws {
        try await TestServer.forEachEngine { server, client in
            try await JWKSTestServer().run { jwks in
                jwks.serve([HostTokenFixture.publicJWK(0, kid: "k1")], cacheControl: "max-age=3600")
                try await HostTokenFixture.register(server, jwksURL: jwks.url)
                let key = try SigningKey.generate(.es256)
                let first = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), key: key)
                XCTAssertEqual(first.status, .ok, "\(first.json)")
                XCTAssertEqual(jwks.fetches, 1)

                // The issuer rotates to k2; the set cached for an hour does not know it.
                jwks.serve([HostTokenFixture.publicJWK(0, kid: "k1"), HostTokenFixture.publicJWK(1, kid: "k2")], cacheControl: "max-age=3600")
                server.clock.advance(by: 11)
                let rotated = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now(), key: 1, kid: "k2"), key: key)
                XCTAssertEqual(rotated.status, .ok, "\(rotated.json)")
                XCTAssertEqual(jwks.fetches, 2, "one refetch for the new kid")

                // Made-up kids: one refetch, then none for 10 s however many arrive.
                server.clock.advance(by: 11)
                for index in 0..<5 {
                    let junk = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now(), kid: "junk-\(index)"), key: key)
                    XCTAssertEqual(junk.json["reason"]?.stringValue, "unknown_kid", "\(junk.json)")
                }
                XCTAssertEqual(jwks.fetches, 3)
                // Known kids keep working from the cache meanwhile.
                let answer1 = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), key: key)
                XCTAssertEqual(answer1.status, .ok, "\(answer1.json)")
                XCTAssertEqual(jwks.fetches, 3)
            }
        }
    }

    func testTheLastGoodKeysServeWhileTheEndpointIsDown() async throws {
        try await TestServer.forEachEngine { server, client in
            try await JWKSTestServer().run { jwks in
                jwks.serve([HostTokenFixture.publicJWK(0, kid: "k1")], cacheControl: "max-age=60")
                try await HostTokenFixture.register(server, jwksURL: jwks.url)
                let key = try SigningKey.generate(.es256)
                let fresh = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), key: key)
                XCTAssertEqual(fresh.status, .ok, "\(fresh.json)")

                // Stale and the endpoint down: answered from the last good set while the refresh fails behind it.
                jwks.setDown(true)
                server.clock.advance(by: 120)
                let stale = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), key: key)
                XCTAssertEqual(stale.status, .ok, "the last good set is kept: \(stale.json)")
                try await eventually { jwks.fetches == 2 }
                // A token whose kid the set lacks waits for the refresh under way, or finds it failed a moment ago:
                // no new fetch either way. Once it is answered the failed refresh is over, before the clock moves on.
                let unknown = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now(), kid: "k-unknown"), key: key)
                XCTAssertEqual(unknown.json["reason"]?.stringValue, "unknown_kid", "\(unknown.json)")
                let kept = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), key: key)
                XCTAssertEqual(kept.status, .ok, "\(kept.json)")
                XCTAssertEqual(jwks.fetches, 2, "no new fetch within 10 s of the failed one")

                jwks.setDown(false)
                server.clock.advance(by: 11)
                let back = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), key: key)
                XCTAssertEqual(back.status, .ok, "\(back.json)")
                try await eventually { jwks.fetches == 3 }
            }
        }
    }

    func testAnIssuerWhoseKeysWereNeverFetchedAnswers503AndIsNotAskedAgainAtOnce() async throws {
        try await TestServer.forEachEngine { server, client in
            try await JWKSTestServer().run { jwks in
                jwks.setDown(true)
                try await HostTokenFixture.register(server, jwksURL: jwks.url)
                for _ in 0..<5 {
                    let answer = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), key: try SigningKey.generate(.es256))
                    XCTAssertEqual(answer.status, .serviceUnavailable)
                    XCTAssertEqual(answer.json["error"]?.stringValue, "unavailable")
                    XCTAssertEqual(answer.json["reason"]?.stringValue, "keys_unavailable")
                    let description = answer.json["error_description"]?.stringValue ?? ""
                    XCTAssertTrue(description.contains(HostTokenFixture.issuer), description)
                    XCTAssertFalse(description.contains(jwks.url), "the key URL is the operator's business: \(description)")
                }
                XCTAssertEqual(jwks.fetches, 1, "a failed fetch is not retried for every request")
                jwks.setDown(false)
                jwks.serve([HostTokenFixture.publicJWK(0, kid: "k1")])
                server.clock.advance(by: 11)
                let answer = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), key: try SigningKey.generate(.es256))
                XCTAssertEqual(answer.status, .ok, "\(answer.json)")
            }
        }
    }

    func testNoCacheIsHeldToTheMinimumFreshness() async throws {
        try await TestServer.forEachEngine { server, client in
            try await JWKSTestServer().run { jwks in
                jwks.serve([HostTokenFixture.publicJWK(0, kid: "k1")], cacheControl: "no-cache")
                try await HostTokenFixture.register(server, jwksURL: jwks.url)
                let key = try SigningKey.generate(.es256)
                for _ in 0..<3 { _ = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), key: key) }
                XCTAssertEqual(jwks.fetches, 1, "no-cache is not a fetch per request")
                server.clock.advance(by: 61)
                let answer4 = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), key: key)
                XCTAssertEqual(answer4.status, .ok, "\(answer4.json)")
                try await eventually { jwks.fetches == 2 }
            }
        }
    }
}
