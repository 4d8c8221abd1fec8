// Tests: user-verification answers are checked on the device first, and only UUID challenge ids reach a URL.
import Foundation
import KeywardJOSE
import KeywardKit
import KeywardWire
import XCTest

/// Answers are checked on the device first, so a typo does not spend one of the server's limited attempts;
/// a challenge id never reaches a URL path unless it is a UUID.
final class UserVerificationAnswerTests: XCTestCase {
    let numbers = UserVerificationPrompt(type: "number-match", numbers: ["5", "34", "56"], pinLength: nil)
    let pin = UserVerificationPrompt(type: "pin", numbers: nil, pinLength: 4)

    func testNumberMatch() throws {
        XCTAssertNoThrow(try numbers.check(answer: "34"))
        XCTAssertNoThrow(try numbers.check(answer: " 56 "), "trimmed, as the server does")
        XCTAssertThrowsError(try numbers.check(answer: "7")) { error in
            XCTAssertEqual(error as? KeywardKitError, .invalidAnswer("'7' is not one of the numbers offered (5, 34, 56)"))
        }
        XCTAssertThrowsError(try numbers.check(answer: "05"), "no leading zeros in the offered strings")
        XCTAssertEqual(numbers.instruction, "the number shown in the browser (one of 5, 34, 56)")
    }

    func testPin() throws {
        XCTAssertNoThrow(try pin.check(answer: "0421"), "leading zeros are part of a PIN")
        XCTAssertThrowsError(try pin.check(answer: "421")) { error in
            XCTAssertEqual(error as? KeywardKitError, .invalidAnswer("the PIN has 4 digits, '421' has 3"))
        }
        XCTAssertThrowsError(try pin.check(answer: "12a4"))
        XCTAssertThrowsError(try pin.check(answer: "١٢٣٤"), "non-ASCII digits")
        XCTAssertEqual(pin.instruction, "the 4-digit PIN shown in the browser")
    }

    func testUnknownPromptIsLeftToTheServer() {
        XCTAssertNoThrow(try UserVerificationPrompt(type: "future-mode", numbers: nil, pinLength: nil).check(answer: "anything"))
    }

    func testChallengeIdMustBeAUUIDBeforeAnythingIsSent() async throws {
        let state = DeviceState(
            issuer: "http://127.0.0.1:1/realms/demo", realm: "demo", userId: "u", username: "test", credentialId: "c", deviceId: "d",
            deviceType: "linux", deviceLabel: "l", pushProviderId: "p", pushProviderType: "log", keyAlgorithm: "ES256"
        )
        let client = PushMFAClient(state: state, key: try SigningKey.generate(.es256), clientId: "push-device-client", clientSecret: "s")
        for bad in ["../../device/rotate-key", "", "9f0c7a52-6a55-4d1e-a0a4-2c1a5d0e7b1", "9f0c7a52-6a55-4d1e-a0a4-2c1a5d0e7b11/x"] {
            do {
                _ = try await client.respond(challengeId: bad, action: .deny)
                XCTFail("sent \(bad)")
            } catch let error as KeywardKitError {
                // Port 1 would answer `unreachable`: this error proves nothing was sent.
                XCTAssertEqual(error, .invalidChallengeId(bad))
            }
        }
    }
}
