// Tests: the device-side pre-validation of host tokens refuses each bad token with its own problem.
import Foundation
import KeywardJOSE
import KeywardKit
import XCTest

/// Pre-validation of host tokens (issue 15, after the source's "What the SDK validates"): each rule refuses with
/// its own problem, and what passes keeps its `iss`, `sub` and `exp`.
final class HostTokenTests: XCTestCase {
    static let key = try! SigningKey.generate(.rs256)
    let now = Date(timeIntervalSince1970: 1_900_000_000)

    func token(_ claims: JSONObject) throws -> String {
        try JWS.sign(header: ["typ": "JWT", "kid": "k1"], claims: claims, key: Self.key)
    }

    var claims: JSONObject {
        let seconds = now.timeIntervalSince1970
        return [
            "iss": "https://auth.host-app.example", "sub": "emp-1001", "aud": "https://id.example.com/realms/demo",
            "iat": .number(seconds), "exp": .number(seconds + 300), "jti": "j-1",
        ]
    }

    func problem(_ compact: String, now: Date? = nil, leeway: TimeInterval = HostToken.defaultLeeway) -> HostTokenProblem? {
        do {
            _ = try HostToken(compact, now: now ?? self.now, leeway: leeway)
            return nil
        } catch {
            guard case .invalidHostToken(let problem) = error else { return nil }
            return problem
        }
    }

    func testWellFormedTokenPassesWithItsClaims() throws {
        let compact = try token(claims)
        let token = try HostToken(compact, now: now)
        XCTAssertEqual(token.compact, compact)
        XCTAssertEqual(token.issuer, "https://auth.host-app.example")
        XCTAssertEqual(token.subject, "emp-1001")
        XCTAssertEqual(token.expiresAt, now.addingTimeInterval(300))
    }

    func testNotThreePartsIsRefused() throws {
        let parts = try token(claims).split(separator: ".").map(String.init)
        XCTAssertEqual(problem(parts[0] + "." + parts[1]), .notThreeParts(found: 2))
        XCTAssertEqual(problem(parts.joined(separator: ".") + ".extra"), .notThreeParts(found: 4))
        XCTAssertEqual(problem(""), .notThreeParts(found: 1))
        XCTAssertEqual(problem("not a jwt"), .notThreeParts(found: 1))
    }

    func testPartsThatAreNotBase64URLJSONAreRefusedNamingThePart() throws {
        let parts = try token(claims).split(separator: ".").map(String.init)
        let cases: [(String, String)] = [
            (parts[0] + "." + parts[1] + "+x." + parts[2], "payload"),
            ("e30=" + "." + parts[1] + "." + parts[2], "header"),
            (Base64URL.encode(Array("not json".utf8)) + "." + parts[1] + "." + parts[2], "header"),
            (parts[0] + "." + Base64URL.encode(Array("[1,2]".utf8)) + "." + parts[2], "claims"),
            (parts[0] + "." + Base64URL.encode(Array(#"{"sub":"a","sub":"b"}"#.utf8)) + "." + parts[2], "claims"),
            (parts[0] + "." + parts[1] + "." + parts[2] + "*", "signature"),
        ]
        for (compact, part) in cases {
            guard case .malformed(let message) = problem(compact) else { XCTFail("\(part): \(String(describing: problem(compact)))"); continue }
            XCTAssertTrue(message.contains(part), "\(part): \(message)")
        }
    }

    func testEmptySignatureIsRefused() throws {
        let parts = try token(claims).split(separator: ".").map(String.init)
        XCTAssertEqual(problem(parts[0] + "." + parts[1] + "."), .unsigned)
    }

    func testEachRequiredClaimMustBePresent() throws {
        for name in ["iss", "sub", "exp"] {
            var claims = claims
            claims[name] = nil
            XCTAssertEqual(problem(try token(claims)), .missingClaim(name))
        }
        // The optional ones are the server's business.
        var optional = claims
        for name in ["aud", "iat", "jti"] { optional[name] = nil }
        XCTAssertNil(problem(try token(optional)))
    }

    func testClaimsOfTheWrongTypeAreRefused() throws {
        let cases: [(String, JSONValue, HostTokenProblem)] = [
            ("iss", 42, .invalidClaim("iss", "is not a string")),
            ("sub", "", .invalidClaim("sub", "is empty")),
            ("sub", .null, .invalidClaim("sub", "is not a string")),
            ("exp", "1900000300", .invalidClaim("exp", "is not a number of seconds since 1970 (RFC 7519 §4.1.4)")),
        ]
        for (name, value, expected) in cases {
            var claims = claims
            claims[name] = value
            XCTAssertEqual(problem(try token(claims)), expected, name)
        }
    }

    func testExpiredBeyondTheLeewayIsRefused() throws {
        let compact = try token(claims)
        let exp = now.addingTimeInterval(300)
        XCTAssertNil(problem(compact, now: exp.addingTimeInterval(29)), "within the 30-second leeway")
        let late = exp.addingTimeInterval(30)
        XCTAssertEqual(problem(compact, now: late), .expired(at: exp, now: late))
        XCTAssertEqual(problem(compact, now: exp, leeway: 0), .expired(at: exp, now: exp))
    }

    func testDescriptionsNameTheProblem() {
        XCTAssertEqual(
            KeywardKitError.invalidHostToken(.missingClaim("sub")).description,
            "host token not sent: claim \"sub\" is required"
        )
        XCTAssertEqual(
            KeywardKitError.invalidHostToken(.notThreeParts(found: 2)).description,
            "host token not sent: a JWT has three dot-separated parts (header.payload.signature); this one has 2"
        )
        XCTAssertEqual(
            KeywardKitError.invalidHostToken(.expired(at: Date(timeIntervalSince1970: 0), now: Date(timeIntervalSince1970: 60))).description,
            "host token not sent: expired at 1970-01-01T00:00:00Z (now 1970-01-01T00:01:00Z)"
        )
        XCTAssertEqual(
            KeywardKitError.exchangeRefused(status: 400, code: "invalid_grant", reason: "expired", description: "host token: token expired").description,
            "host token exchange refused (400 invalid_grant, expired): host token: token expired"
        )
    }
}
