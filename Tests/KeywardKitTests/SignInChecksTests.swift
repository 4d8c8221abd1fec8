// Tests: SignInClient refuses an id_token that does not show what the request asked for (review finding 7).
import Foundation
import KeywardJOSE
@testable import KeywardKit
import XCTest

final class SignInChecksTests: XCTestCase {
    private let started = Date(timeIntervalSince1970: 1_800_000_000)

    private func request(_ options: SignInOptions) -> SignInRequest {
        SignInRequest(
            url: URL(string: "https://id.example/realms/r/protocol/openid-connect/auth")!, redirectURI: "com.example.app:/cb", state: "s",
            nonce: "n", codeVerifier: "v", dpopThumbprint: "t", options: options, startedAt: started
        )
    }

    private func claims(authTime: Date?, acr: String?) -> JSONObject {
        var claims: JSONObject = ["sub": "u"]
        if let authTime { claims["auth_time"] = .number(authTime.timeIntervalSince1970) }
        if let acr { claims["acr"] = .string(acr) }
        return claims
    }

    func testPromptLoginNeedsASignInAfterTheRequest() throws {
        let asked = request(SignInOptions(prompt: "login"))
        XCTAssertNoThrow(try SignInClient.check(claims(authTime: started.addingTimeInterval(5), acr: nil), against: asked, now: started.addingTimeInterval(10)))
        XCTAssertThrowsError(try SignInClient.check(claims(authTime: started.addingTimeInterval(-3600), acr: nil), against: asked, now: started))
        XCTAssertThrowsError(try SignInClient.check(claims(authTime: nil, acr: nil), against: asked, now: started))
    }

    func testMaxAgeBoundsTheSignInsAge() throws {
        let asked = request(SignInOptions(maxAge: 300))
        XCTAssertNoThrow(try SignInClient.check(claims(authTime: started, acr: nil), against: asked, now: started.addingTimeInterval(200)))
        XCTAssertThrowsError(try SignInClient.check(claims(authTime: started, acr: nil), against: asked, now: started.addingTimeInterval(1000)))
    }

    func testAcrValuesAskedForMustBeReached() throws {
        let asked = request(SignInOptions(acrValues: ["urn:keyward:acr:mfa"]))
        XCTAssertNoThrow(try SignInClient.check(claims(authTime: started, acr: "urn:keyward:acr:mfa"), against: asked, now: started))
        XCTAssertThrowsError(try SignInClient.check(claims(authTime: started, acr: "urn:keyward:acr:1fa"), against: asked, now: started)) { error in
            guard case KeywardKitError.signInMismatch = error else { return XCTFail("\(error)") }
        }
        XCTAssertNoThrow(try SignInClient.check(claims(authTime: started, acr: "urn:keyward:acr:1fa"), against: request(SignInOptions()), now: started))
    }
}
