// Tests: each host-token rule broken alone is refused with its own reason, never a 500, and nothing is exchanged.
import Crypto
import Foundation
import HTTPTypes
import KeywardJOSE
import KeywardServer
import XCTest

/// Every rule a host token must meet, broken one at a time: each refusal is a 400 `invalid_grant` with its own
/// stable `reason` and a description naming the rule, never a 500, and none is exchanged.
final class HostTokenRefusalTests: XCTestCase {
    struct Case {
        let name: String
        let reason: String
        /// A word the description must contain.
        let mentions: String
        let token: @Sendable (Date) throws -> String
    }

    static let cases: [Case] = [
        Case(name: "wrong alg", reason: "alg_not_allowed", mentions: "ES256") { now in
            var claims = try JWS.parse(try HostTokenFixture.token(now: now)).claims()
            claims["jti"] = .string(UUID().uuidString)
            return try JWS.sign(header: ["typ": "JWT", "kid": "k1"], claims: claims, key: try SigningKey.generate(.es256))
        },
        Case(name: "alg none", reason: "alg_not_allowed", mentions: "none") { now in
            let parts = try HostTokenFixture.token(now: now).split(separator: ".")
            return Base64URL.encode(Array(#"{"alg":"none","typ":"JWT","kid":"k1"}"#.utf8)) + "." + parts[1] + "."
        },
        Case(name: "HS256 keyed with the public key", reason: "alg_not_allowed", mentions: "HS256") { now in
            let parts = try HostTokenFixture.token(now: now).split(separator: ".")
            let input = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT","kid":"k1"}"#.utf8)) + "." + parts[1]
            let secret = SymmetricKey(data: StrictJSON.serialize(HostTokenFixture.publicJWK(0, kid: "k1").jsonObject))
            let mac = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: secret)
            return input + "." + Base64URL.encode(Array(mac))
        },
        Case(name: "unknown kid after a refresh", reason: "unknown_kid", mentions: "no-such-key") { now in
            try HostTokenFixture.token(now: now, kid: "no-such-key")
        },
        Case(name: "unregistered iss", reason: "unknown_issuer", mentions: "https://other.example") { now in
            try HostTokenFixture.token(now: now, iss: "https://other.example")
        },
        Case(name: "wrong aud", reason: "aud_mismatch", mentions: "audience") { now in
            try HostTokenFixture.token(now: now, changes: ["aud": .string("https://elsewhere.example")])
        },
        Case(name: "missing aud", reason: "missing_claim", mentions: "\"aud\"") { now in
            try HostTokenFixture.token(now: now, changes: ["aud": nil])
        },
        Case(name: "sub not enrolled", reason: "subject_not_enrolled", mentions: "not enrolled") { now in
            try HostTokenFixture.token(now: now, changes: ["sub": .string("enterprise-9999")])
        },
        Case(name: "missing sub", reason: "missing_claim", mentions: "\"sub\"") { now in
            try HostTokenFixture.token(now: now, changes: ["sub": nil])
        },
        Case(name: "expired", reason: "expired", mentions: "expired") { now in
            let iat = now.timeIntervalSince1970 - 600
            return try HostTokenFixture.token(now: now, changes: ["iat": .number(iat), "exp": .number(iat + 300)])
        },
        Case(name: "no nbf and no iat", reason: "missing_claim", mentions: "\"iat\" or \"nbf\"") { now in
            try HostTokenFixture.token(now: now, changes: ["iat": nil])
        },
        Case(name: "lifetime too long", reason: "lifetime_too_long", mentions: "900") { now in
            try HostTokenFixture.token(now: now, changes: ["exp": .number(now.timeIntervalSince1970.rounded(.down) + 3600)])
        },
        Case(name: "missing jti", reason: "missing_claim", mentions: "\"jti\"") { now in
            try HostTokenFixture.token(now: now, changes: ["jti": nil])
        },
        Case(name: "wrong typ", reason: "typ_mismatch", mentions: "typ") { now in
            try HostTokenFixture.token(now: now, header: ["typ": "dpop+jwt"])
        },
        Case(name: "no typ", reason: "typ_mismatch", mentions: "typ") { now in
            try HostTokenFixture.token(now: now, header: ["typ": nil])
        },
        Case(name: "duplicate header member", reason: "duplicate_member", mentions: "alg") { now in
            let parts = try HostTokenFixture.token(now: now).split(separator: ".")
            let header = Base64URL.encode(Array(#"{"alg":"RS256","typ":"JWT","kid":"k1","alg":"none"}"#.utf8))
            return header + "." + parts[1] + "." + parts[2]
        },
        Case(name: "oversize token", reason: "too_large", mentions: "8192") { now in
            try HostTokenFixture.token(now: now, changes: ["padding": .string(String(repeating: "x", count: 9000))])
        },
        Case(name: "not a JWS", reason: "malformed", mentions: "dot-separated") { _ in "not-a-token" },
        Case(name: "forged signature", reason: "bad_signature", mentions: "signature") { now in
            try HostTokenFixture.token(now: now, key: 1)
        },
    ]

    func testEveryRuleRefusesWithItsOwnReason() async throws {
        try await TestServer.forEachEngine { server, client in
            try await JWKSTestServer().run { jwks in
                jwks.serve([HostTokenFixture.publicJWK(0, kid: "k1")])
                try await HostTokenFixture.register(server, jwksURL: jwks.url)
                let key = try SigningKey.generate(.es256)
                var descriptions: Set<String> = []
                for refusal in Self.cases {
                    let answer = try await client.exchange(server, try refusal.token(server.clock.now()), key: key)
                    XCTAssertEqual(answer.status, .badRequest, "\(refusal.name): \(answer.json)")
                    XCTAssertEqual(answer.json["error"]?.stringValue, "invalid_grant", refusal.name)
                    XCTAssertEqual(answer.json["reason"]?.stringValue, refusal.reason, "\(refusal.name): \(answer.json)")
                    let description = answer.json["error_description"]?.stringValue ?? ""
                    XCTAssertTrue(description.contains(refusal.mentions), "\(refusal.name): \(description)")
                    XCTAssertTrue(descriptions.insert(description).inserted, "\(refusal.name) shares its description: \(description)")
                }
            }
        }
    }

    func testAReplayedJTIIsRefusedAndAnotherJTIIsNot() async throws {
        try await TestServer.forEachEngine { server, client in
            try await JWKSTestServer().run { jwks in
                jwks.serve([HostTokenFixture.publicJWK(0, kid: "k1")])
                try await HostTokenFixture.register(server, jwksURL: jwks.url)
                let key = try SigningKey.generate(.es256)
                let token = try HostTokenFixture.token(now: server.clock.now())
                let first = try await client.exchange(server, token, key: key)
                XCTAssertEqual(first.status, .ok, "\(first.json)")
                let replay = try await client.exchange(server, token, key: key)
                XCTAssertEqual(replay.status, .badRequest)
                XCTAssertEqual(replay.json["reason"]?.stringValue, "jti_replayed")
                let fresh = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), key: key)
                XCTAssertEqual(fresh.status, .ok, "\(fresh.json)")
            }
        }
    }

    func testADisabledUserIsRefused() async throws {
        try await TestServer.forEachEngine { server, client in
            try await JWKSTestServer().run { jwks in
                jwks.serve([HostTokenFixture.publicJWK(0, kid: "k1")])
                try await HostTokenFixture.register(server, jwksURL: jwks.url)
                _ = try await server.runtime.accounts.users.disable(realm: "demo", username: HostTokenFixture.subject)
                let answer = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), key: try SigningKey.generate(.es256))
                XCTAssertEqual(answer.json["reason"]?.stringValue, "user_disabled", "\(answer.json)")
            }
        }
    }

    /// Enrolled users are cached for UserService.identityCacheLifetime (5 s): one disabled after an exchange is refused once it passed.
    func testAUserDisabledAfterAnExchangeIsRefusedWithinFiveSeconds() async throws {
        try await TestServer.forEachEngine { server, client in
            try await JWKSTestServer().run { jwks in
                jwks.serve([HostTokenFixture.publicJWK(0, kid: "k1")])
                try await HostTokenFixture.register(server, jwksURL: jwks.url)
                let key = try SigningKey.generate(.es256)
                let first = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), key: key)
                XCTAssertEqual(first.status, .ok, "\(first.json)")
                _ = try await server.runtime.accounts.users.disable(realm: "demo", username: HostTokenFixture.subject)
                server.clock.advance(by: 6)
                let answer = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), key: key)
                XCTAssertEqual(answer.json["reason"]?.stringValue, "user_disabled", "\(answer.json)")
            }
        }
    }

    func testAnExpiredPEMCertificateIsRefused() async throws {
        try await TestServer.forEachEngine { server, client in
            let pem = try HostTokenFixture.certificatePEM(1, notBefore: server.clock.now().addingTimeInterval(-86400), days: 2)
            try await HostTokenFixture.register(server, jwksURL: nil, pem: pem)
            server.clock.advance(by: 2 * 86400)
            let token = try HostTokenFixture.token(
                now: server.clock.now(), key: 1, kid: nil, iss: HostTokenFixture.pemIssuer, changes: ["sub": .string("pem-" + HostTokenFixture.subject)]
            )
            let answer = try await client.exchange(server, token, key: try SigningKey.generate(.es256))
            XCTAssertEqual(answer.json["reason"]?.stringValue, "key_expired", "\(answer.json)")
        }
    }
}
