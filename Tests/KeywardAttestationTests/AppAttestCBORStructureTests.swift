// Tests: real App Attest objects and assertions decode to Apple's documented CBOR structure and re-encode exactly.
import KeywardCBOR
import XCTest

/// KeywardCBOR on real device output: the seven App Attest attestation objects and assertions decode to the
/// structure Apple documents, and re-encode to the very bytes the devices sent (their encoder is canonical).
final class AppAttestCBORStructureTests: XCTestCase {
    func testRealAttestationObjectsDecodeToTheDocumentedStructure() throws {
        for vector in try AppAttestVector.all() {
            let object = try CBORReader.decode(vector.attestation)
            XCTAssertEqual(object.mapEntries?.map(\.key), [.text("fmt"), .text("attStmt"), .text("authData")], vector.name)
            XCTAssertEqual(object["fmt"], .text("apple-appattest"))
            let statement = try XCTUnwrap(object["attStmt"])
            XCTAssertEqual(statement.mapEntries?.map(\.key), [.text("x5c"), .text("receipt")])
            let chain = try XCTUnwrap(statement["x5c"]?.arrayValue)
            XCTAssertEqual(chain.count, 2)
            for certificate in chain {
                // DER SEQUENCE with a two-byte length.
                XCTAssertEqual(try XCTUnwrap(certificate.bytesValue).prefix(2), [0x30, 0x82])
            }
            XCTAssertGreaterThan(try XCTUnwrap(statement["receipt"]?.bytesValue).count, 3000)
            let authData = try XCTUnwrap(object["authData"]?.bytesValue)
            XCTAssertEqual(authData.count, 164)
            XCTAssertEqual(Array(authData[37..<53]), Array("appattestdevelop".utf8))
            XCTAssertEqual(Array(authData[55..<87]), vector.keyID, "the credential id is the key id")

            var reader = CBORReader(Array(authData[87...]))
            let key = try reader.read()
            XCTAssertTrue(reader.isAtEnd, "iOS 14: nothing after the key")
            XCTAssertEqual(key.mapEntries?.map(\.key), [.integer(1), .integer(3), .integer(-1), .integer(-2), .integer(-3)])
            XCTAssertEqual(key[1], .integer(2))
            XCTAssertEqual(key[3], .integer(-7))
            XCTAssertEqual(key[-1], .integer(1))
            XCTAssertEqual(key[-2]?.bytesValue?.count, 32)
            XCTAssertEqual(key[-3]?.bytesValue?.count, 32)

            XCTAssertEqual(object.encoded, vector.attestation, "\(vector.name) re-encodes to the device's bytes")
        }
    }

    func testRealAssertionsDecodeToSignatureAndAuthenticatorData() throws {
        for vector in try AppAttestVector.all() {
            let assertion = try CBORReader.decode(vector.assertion)
            XCTAssertEqual(assertion.mapEntries?.map(\.key), [.text("signature"), .text("authenticatorData")])
            XCTAssertEqual(assertion["signature"]?.bytesValue?.first, 0x30, "a DER ECDSA signature")
            XCTAssertEqual(assertion["authenticatorData"]?.bytesValue?.count, 37)
            XCTAssertEqual(assertion.encoded, vector.assertion)
        }
    }
}
