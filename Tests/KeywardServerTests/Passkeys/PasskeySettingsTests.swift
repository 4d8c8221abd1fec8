// Tests: a realm's passkey settings as the CLI sets them (each refusal names the flag and what it takes), as stored
// (what a hand-edited row gets wrong is dropped, not trusted), and the RP ID browsers would refuse.
import KeywardJOSE
@testable import KeywardServer
import XCTest

final class PasskeySettingsTests: XCTestCase {
    func testEachSettingTakesWhatItsFlagSays() throws {
        var settings = PasskeySettings()
        XCTAssertEqual(settings.mode, .off)
        XCTAssertFalse(settings.secondStep)
        try settings.apply("passkeys", "preferred")
        try settings.apply("webauthn-rp-id", "example.com")
        try settings.apply("webauthn-origin", "https://shop.example.com")
        try settings.apply("webauthn-origin", "android:apk-key-hash:" + Base64URL.encode([UInt8](repeating: 7, count: 32)))
        try settings.apply("webauthn-origin", "https://shop.example.com")
        try settings.apply("webauthn-user-verification", "preferred")
        try settings.apply("passkey-second-step", "on")
        try settings.apply("webauthn-attestation", "direct")
        XCTAssertEqual(settings.mode, .preferred)
        XCTAssertEqual(settings.rpID, "example.com")
        XCTAssertEqual(settings.extraOrigins.count, 2, "an origin given twice is kept once")
        XCTAssertEqual(settings.userVerification, .preferred)
        XCTAssertTrue(settings.secondStep)
        XCTAssertEqual(settings.attestation, .direct)
        try settings.apply("passkey-second-step", "off")
        XCTAssertFalse(settings.secondStep)
    }

    func testARefusalNamesTheFlagAndWhatItTakes() {
        let refused: [(String, String, String)] = [
            ("passkeys", "always", "off, optional or preferred"),
            ("webauthn-rp-id", "Example.COM", "a domain name in lower case"),
            ("webauthn-rp-id", "https://example.com", "a domain name in lower case"),
            ("webauthn-origin", "https://shop.example.com/path", "an origin such as"),
            ("webauthn-origin", "http://shop.example.com", "an origin such as"),
            ("webauthn-origin", "android:apk-key-hash:short", "android:apk-key-hash: then"),
            ("webauthn-user-verification", "discouraged", "required or preferred"),
            ("passkey-second-step", "yes", "on or off"),
            ("webauthn-attestation", "enterprise", "none or direct"),
            ("webauthn-attestation-roots", "not a certificate", "PEM certificates"),
        ]
        for (key, value, expected) in refused {
            var settings = PasskeySettings()
            XCTAssertThrowsError(try settings.apply(key, value), "\(key) \(value)") { error in
                let description = (error as? PasskeySettingsError)?.description ?? ""
                XCTAssertTrue(description.hasPrefix("--\(key): expected \(expected)"), description)
            }
            XCTAssertEqual(settings.jsonObject, PasskeySettings().jsonObject, "a refused value changes nothing")
        }
    }

    func testStoredSettingsRoundTripAndWhatIsWrongInARowIsDropped() {
        var settings = PasskeySettings()
        settings.mode = .optional
        settings.rpID = "example.com"
        settings.extraOrigins = ["https://shop.example.com"]
        settings.secondStep = true
        XCTAssertEqual(PasskeySettings(json: settings.jsonObject).jsonObject, settings.jsonObject)

        let tampered: JSONObject = [
            "mode": .string("always"), "rpId": .string("Not A Domain"), "origins": .array([.string("ftp://x"), .string("https://ok.example.com")]),
            "userVerification": .string("never"), "attestation": .string("enterprise"), "secondStep": .string("on"),
        ]
        let read = PasskeySettings(json: tampered)
        XCTAssertEqual(read.mode, .off)
        XCTAssertNil(read.rpID)
        XCTAssertEqual(read.extraOrigins, ["https://ok.example.com"])
        XCTAssertEqual(read.userVerification, .required)
        XCTAssertEqual(read.attestation, .none)
        XCTAssertFalse(read.secondStep)
    }

    func testTheRPIDProblemsBrowsersWouldRefuse() {
        let settings = PasskeySettings()
        XCTAssertNil(settings.rpIDProblem(publicURL: "https://login.example.com"))
        XCTAssertNotNil(settings.rpIDProblem(publicURL: "http://127.0.0.1:8080"))
        var parent = PasskeySettings()
        parent.rpID = "example.com"
        XCTAssertNil(parent.rpIDProblem(publicURL: "https://login.example.com"))
        XCTAssertNotNil(parent.rpIDProblem(publicURL: "https://login.example.org"))
        XCTAssertNotNil(parent.rpIDProblem(publicURL: "https://notexample.com"))
    }
}
