// Tests: the stored key records both key stores keep round-trip; anything else is refused rather than guessed at.
import KeywardJOSE
@testable import KeywardKit
import XCTest

/// The JSON both stores keep: software keys in the original two-member form, enclave handles marked as such, and
/// anything else refused rather than guessed at.
final class StoredKeyTests: XCTestCase {
    func testRecordsRoundTrip() throws {
        let software = StoredKey(software: try SigningKey.generate(.rs256))
        XCTAssertEqual(StoredKey(json: software.json), software)
        XCTAssertEqual(Set(try StrictJSON.parseObject(software.json).keys), ["alg", "key"])

        let enclave = StoredKey(algorithm: .es256, storage: .secureEnclave, bytes: Array(0..<200))
        XCTAssertEqual(StoredKey(json: enclave.json), enclave)
        XCTAssertEqual(try StrictJSON.parseObject(enclave.json)["storage"], "secure-enclave")
    }

    func testRecordsWeDidNotWriteAreRefused() {
        for json in [
            #"{"alg":"ES384","key":"AAAA","storage":"secure-enclave"}"#,
            #"{"alg":"ES256","key":"AAAA","storage":"tpm"}"#,
            #"{"alg":"ES256","key":"AAAA","storage":true}"#,
            #"{"alg":"HS256","key":"AAAA"}"#,
            #"{"alg":"ES256","key":"AA+A"}"#,
            #"{"alg":"ES256"}"#,
            #"{"alg":"ES256","key":"AAAA","alg":"ES256"}"#,
            "not json",
        ] {
            XCTAssertNil(StoredKey(json: Array(json.utf8)), json)
        }
    }

    func testKeychainErrorsNameTheKeyAndStatus() {
        let error = KeywardKitError.keychain(key: "push-mfa", operation: "write", status: -34018)
        XCTAssertTrue(error.description.contains("'push-mfa'"), error.description)
        XCTAssertTrue(error.description.contains("-34018"), error.description)
        XCTAssertTrue(error.description.contains("entitlement"), error.description)
    }
}
