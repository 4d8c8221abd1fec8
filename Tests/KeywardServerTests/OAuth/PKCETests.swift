// Tests: a code verifier is checked against its S256 challenge, and a malformed verifier never passes.
@testable import KeywardServer
import XCTest

/// RFC 7636 §4.1, §4.2 and §4.6, with Appendix B's example.
final class PKCETests: XCTestCase {
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

    func testTheRFCExample() {
        XCTAssertEqual(PKCE.challenge(for: Self.verifier), Self.challenge)
        XCTAssertTrue(PKCE.verifies(Self.verifier, challenge: Self.challenge))
    }

    func testAWrongOrMalformedVerifierIsRefused() {
        XCTAssertFalse(PKCE.verifies(Self.verifier + "x", challenge: Self.challenge), "another verifier")
        XCTAssertFalse(PKCE.verifies(Self.verifier, challenge: Self.challenge.lowercased()), "another challenge")
        XCTAssertFalse(PKCE.verifies(Self.challenge, challenge: Self.challenge), "the challenge itself (what plain would accept)")
        XCTAssertFalse(PKCE.verifies(String(Self.verifier.dropLast()), challenge: PKCE.challenge(for: String(Self.verifier.dropLast()))), "42 characters")
        let long = String(repeating: "a", count: 129)
        XCTAssertFalse(PKCE.verifies(long, challenge: PKCE.challenge(for: long)), "129 characters")
        let spaced = String(repeating: "a", count: 42) + " "
        XCTAssertFalse(PKCE.verifies(spaced, challenge: PKCE.challenge(for: spaced)), "a character outside the unreserved set")
        let longest = String(repeating: "~", count: 128)
        XCTAssertTrue(PKCE.verifies(longest, challenge: PKCE.challenge(for: longest)), "128 unreserved characters")
    }
}
