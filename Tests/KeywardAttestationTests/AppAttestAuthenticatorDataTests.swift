// Tests: the App Attest authData reader: the layout, Apple's newer trailing map, and what it refuses.
import Crypto
import KeywardAttestation
import KeywardCBOR
import XCTest

/// The authData reader on constructed bytes: the layout, Apple's newer trailing map, and what it refuses.
final class AppAttestAuthenticatorDataTests: XCTestCase {
    private let rpIDHash = Array(SHA256.hash(data: Array("ABCDE12345.com.example.app".utf8)))
    private let credentialID = [UInt8](repeating: 0xC1, count: 32)
    private let coseKey = CBORValue.map([
        CBORMapEntry(.integer(1), .integer(2)), CBORMapEntry(.integer(3), .integer(-7)), CBORMapEntry(.integer(-1), .integer(1)),
        CBORMapEntry(.integer(-2), .bytes([UInt8](repeating: 0xAA, count: 32))), CBORMapEntry(.integer(-3), .bytes([UInt8](repeating: 0xBB, count: 32))),
    ])
    /// The map of Apple's current validation guide sample.
    private let trailer = CBORValue.map([
        CBORMapEntry(.text("apple_bundle_version_01"), .text("1")),
        CBORMapEntry(.text("apple_validation_category_01"), .bytes([1, 0, 0, 0])),
    ])

    private func authData(counter: [UInt8] = [0, 0, 0, 0], credentialLength: [UInt8]? = nil, after: [UInt8]) -> [UInt8] {
        rpIDHash + [0x40] + counter + Array("appattestdevelop".utf8) + (credentialLength ?? [0, UInt8(credentialID.count)]) + credentialID + after
    }

    func testAClassicAttestationAuthDataEndsWithTheKey() throws {
        let bytes = authData(counter: [0, 0, 1, 2], after: coseKey.encoded)
        XCTAssertEqual(bytes.count, 164, "the iOS 14 size")
        let parsed = try AppAttestAuthenticatorData(attestationBytes: bytes)
        XCTAssertEqual(parsed.bytes, bytes)
        XCTAssertEqual(parsed.rpIDHash, rpIDHash)
        XCTAssertEqual(parsed.flags, 0x40)
        XCTAssertEqual(parsed.counter, 258)
        let credential = try XCTUnwrap(parsed.attestedCredential)
        XCTAssertEqual(credential.aaguid, Array("appattestdevelop".utf8))
        XCTAssertEqual(credential.credentialID, credentialID)
        XCTAssertEqual(credential.publicKey, coseKey)
        XCTAssertNil(credential.trailer)
    }

    /// Apple's 2026 layout (the validation guide's sample has 226 bytes): the map after the key is read as its own
    /// item, and the key before it is unchanged.
    func testATrailingMapAfterTheCOSEKeyIsReadAsItsOwnItem() throws {
        let bytes = authData(after: coseKey.encoded + trailer.encoded)
        XCTAssertEqual(bytes.count, 226, "the size of Apple's sample")
        let credential = try XCTUnwrap(AppAttestAuthenticatorData(attestationBytes: bytes).attestedCredential)
        XCTAssertEqual(credential.publicKey, coseKey)
        XCTAssertEqual(credential.trailer, trailer)
        XCTAssertEqual(credential.trailer?["apple_validation_category_01"]?.bytesValue, [1, 0, 0, 0])
    }

    func testWhatComesAfterTheKeyMustBeOneMap() {
        for (name, after) in [
            ("two maps", coseKey.encoded + trailer.encoded + trailer.encoded),
            ("a text", coseKey.encoded + CBORValue.text("x").encoded),
            ("a stray byte", coseKey.encoded + trailer.encoded + [0x00]),
            ("a key that is an array", CBORValue.array([]).encoded),
            ("no key", []),
            ("a truncated key", Array(coseKey.encoded.dropLast())),
            ("an indefinite map", [0xBF, 0x01, 0x02, 0xFF]),
        ] {
            XCTAssertThrowsError(try AppAttestAuthenticatorData(attestationBytes: authData(after: after)), name) { error in
                XCTAssertEqual((error as? AttestationFailure)?.reason, .malformed, name)
            }
        }
    }

    func testTheCredentialIDLengthIsCheckedAgainstTheBytes() {
        for length in [[0x00, 0x21 + 77], [0xFF, 0xFF]] as [[UInt8]] {
            XCTAssertThrowsError(try AppAttestAuthenticatorData(attestationBytes: authData(credentialLength: length, after: coseKey.encoded))) { error in
                XCTAssertEqual((error as? AttestationFailure)?.reason, .malformed)
            }
        }
        // Every prefix short of the whole is refused, none traps.
        let whole = authData(after: coseKey.encoded + trailer.encoded)
        for end in 0..<whole.count {
            // Cut right after the key, what is left is the classic layout and reads.
            if end == whole.count - trailer.encoded.count { continue }
            XCTAssertThrowsError(try AppAttestAuthenticatorData(attestationBytes: Array(whole.prefix(end))), "prefix \(end)")
        }
    }

    /// An assertion's authenticatorData: the 37-byte head, and anything after it left unread (iOS 27 writes the
    /// map there and sets the AT flag without attested credential data).
    func testAssertionAuthenticatorDataReadsOnlyItsHead() throws {
        let head = rpIDHash + [0x40, 0, 0, 0, 9]
        let classic = try AppAttestAuthenticatorData(assertionBytes: head)
        XCTAssertEqual(classic.counter, 9)
        XCTAssertNil(classic.attestedCredential)
        let longer = try AppAttestAuthenticatorData(assertionBytes: head + trailer.encoded)
        XCTAssertEqual(longer.counter, 9)
        XCTAssertEqual(longer.bytes.count, 37 + trailer.encoded.count)
        XCTAssertThrowsError(try AppAttestAuthenticatorData(assertionBytes: Array(head.prefix(36))))
    }
}
