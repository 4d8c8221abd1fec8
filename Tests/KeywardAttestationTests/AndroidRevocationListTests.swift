// Tests: Google's attestation status list: its format, serial matching, and a listed certificate refusing a chain.
import Foundation
import KeywardAttestation
import XCTest

/// Google's attestation status list: its format, serial numbers as Google writes them, and a listed certificate
/// refusing a chain before anything else about the attestation is judged.
final class AndroidRevocationListTests: XCTestCase {
    /// caiman's chain: leaf 0x1, StrongBox intermediate, "Droid CA3", "Droid CA2" (serial 0x0388…60d, an odd
    /// number of hex digits), and the device's copy of the root.
    let chainName = "caiman/sdk36/SB_EC_RKP"

    func testListedCertificateOfTheChainIsRevoked() async throws {
        let list = try RevocationList(json: Array("""
        {"entries": {
          "2c8cdddfd5e03bfc": {"status": "REVOKED", "expires": "2020-11-13", "reason": "KEY_COMPROMISE", "comment": "an unrelated key"},
          "388266760658996860d": {"status": "REVOKED", "reason": "SOFTWARE_FLAW"}
        }}
        """.utf8))
        let verifier = AndroidKeyAttestationVerifier(revocationList: list)
        let chain = try AndroidVectors.chain(chainName)
        let time = try AndroidVectors.creationTime(chainName)
        let policy = AndroidAttestationPolicy(expectedChallenge: try AndroidVectors.challenge(chainName))
        do {
            _ = try await verifier.verify(chain, policy: policy, at: time)
            XCTFail("a revoked chain verified")
        } catch {
            XCTAssertEqual(error.reason, .revoked)
            XCTAssert(error.detail.contains("certificate 4 (serial 388266760658996860d)"), error.detail)
            XCTAssert(error.detail.contains("SOFTWARE_FLAW"), error.detail)
        }
        // Revocation is checked before the KeyDescription: a wrong challenge does not change the reason.
        do {
            _ = try await verifier.verify(chain, policy: AndroidAttestationPolicy(expectedChallenge: [0]), at: time)
            XCTFail("a revoked chain verified")
        } catch {
            XCTAssertEqual(error.reason, .revoked)
        }
    }

    func testSerialsMatchWhateverTheirCaseAndLeadingZeros() async throws {
        let chain = try AndroidVectors.chain(chainName)
        let time = try AndroidVectors.creationTime(chainName)
        let policy = AndroidAttestationPolicy(expectedChallenge: try AndroidVectors.challenge(chainName))
        for (serial, status) in [("0388266760658996860D", "REVOKED"), ("00000001", "SUSPENDED"), ("F59C0AE29D0429667B3B45D319FA0D64C99194", "SUSPENDED")] {
            let list = try RevocationList(json: Array(#"{"entries":{"\#(serial)":{"status":"\#(status)"}}}"#.utf8))
            do {
                _ = try await AndroidKeyAttestationVerifier(revocationList: list).verify(chain, policy: policy, at: time)
                XCTFail("\(serial) was not matched")
            } catch {
                XCTAssertEqual(error.reason, .revoked, serial)
                XCTAssert(error.detail.contains(status), error.detail)
            }
        }
        XCTAssertEqual(RevocationList.normalizedSerial("000"), "0")
        XCTAssertEqual(RevocationList.normalizedSerial("00Ab"), "ab")
    }

    func testChainWithNoListedSerialPassesAndSaysSo() async throws {
        let list = try RevocationList(json: Array(#"{"entries":{"c35747a084470c3135aeefe2b8d40cd6":{"status":"REVOKED","reason":"KEY_COMPROMISE"}},"updated":"x"}"#.utf8))
        let result = try await AndroidKeyAttestationVerifier(revocationList: list).verify(
            AndroidVectors.chain(chainName), policy: AndroidAttestationPolicy(expectedChallenge: AndroidVectors.challenge(chainName)),
            at: AndroidVectors.creationTime(chainName)
        )
        XCTAssertEqual(result.checks.first { $0.name == "revocation" }, AttestationCheck("revocation", .passed, "no certificate among 1 listed"))
        XCTAssertEqual(result.certificateSerials, ["1", "65d2949536924da695f5ae1eb290cd4d", "f59c0ae29d0429667b3b45d319fa0d64c99194", "388266760658996860d", "d50ff25ba3f2d6b3"])
    }

    func testDamagedListsAreRefusedWhenLoaded() {
        let cases = [
            "not JSON": "entries",
            "an array": "[]",
            "no entries": #"{"revoked":{}}"#,
            "entries as an array": #"{"entries":[]}"#,
            "an entry that is a string": #"{"entries":{"ab":"REVOKED"}}"#,
            "a serial that is not hex": #"{"entries":{"0x1f":{"status":"REVOKED"}}}"#,
            "an empty serial": #"{"entries":{"":{"status":"REVOKED"}}}"#,
            "a duplicated serial": #"{"entries":{"ab":{},"ab":{}}}"#,
        ]
        for (name, text) in cases {
            XCTAssertThrowsError(try RevocationList(json: Array(text.utf8)), name) { error in
                XCTAssertEqual((error as? AttestationFailure)?.reason, .malformed, name)
            }
        }
    }
}
