// The WebAuthn assertion checks (§7.2), each reached with an assertion that has exactly one thing wrong.
import AttestationTestSupport
import Foundation
import KeywardAttestation
import XCTest

final class WebAuthnAssertionTests: XCTestCase {
    let party = WebAuthnRelyingParty(rpID: "keyward.test", origins: ["https://keyward.test"])
    let challenge = Array("the sign-in challenge, 32 bytes.".utf8)

    func stored(_ passkey: ForgedPasskey, signCount: UInt32 = 0, backupEligible: Bool = false) throws -> WebAuthnRelyingParty.StoredCredential {
        WebAuthnRelyingParty.StoredCredential(key: try COSECredentialKey(passkey.key.coseKey), signCount: signCount, backupEligible: backupEligible)
    }

    func verify(
        _ passkey: ForgedPasskey, stored: WebAuthnRelyingParty.StoredCredential? = nil, type: String = "webauthn.get", requireUserVerification: Bool = true,
        mutate: (inout [UInt8], inout [UInt8], inout [UInt8]) -> Void = { _, _, _ in }
    ) throws -> WebAuthnRelyingParty.Assertion {
        var (clientData, authData, signature) = try passkey.assertion(challenge: challenge, type: type)
        mutate(&clientData, &authData, &signature)
        return try party.verifyAssertion(
            clientDataJSON: clientData, authenticatorData: authData, signature: signature, challenge: challenge,
            credential: try stored ?? self.stored(passkey), requireUserVerification: requireUserVerification
        )
    }

    func assertRefused(_ reason: WebAuthnReason, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) {
        do {
            try body()
            XCTFail("accepted; expected \(reason.rawValue)", file: file, line: line)
        } catch let failure as WebAuthnFailure {
            XCTAssertEqual(failure.reason, reason, failure.detail, file: file, line: line)
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
    }

    func testEachAlgorithmSignsIn() throws {
        for algorithm in [-7, -8, -257] {
            var passkey = try ForgedPasskey(algorithm: algorithm)
            passkey.signCount = 5
            let assertion = try verify(passkey, stored: try stored(passkey, signCount: 4))
            XCTAssertEqual(assertion.signCount, 5)
            XCTAssertTrue(assertion.userVerified)
        }
    }

    func testTamperedPartsAreRefused() throws {
        let passkey = try ForgedPasskey()
        assertRefused(.signatureInvalid) { _ = try self.verify(passkey) { _, _, signature in signature[signature.count - 3] ^= 1 } }
        assertRefused(.signatureInvalid) { _ = try self.verify(passkey) { _, authData, _ in authData[36] ^= 1 } }
        // The same JSON with one more space: the signature covers the bytes, not their meaning.
        assertRefused(.signatureInvalid) { _ = try self.verify(passkey) { clientData, _, _ in clientData.insert(0x20, at: 1) } }
        assertRefused(.signatureInvalid) { _ = try self.verify(passkey) { _, _, signature in signature = [] } }
        assertRefused(.signatureInvalid) { _ = try self.verify(passkey) { _, _, signature in signature = Array(repeating: 0x30, count: 300) } }
        // A DER signature with a longer length form than needed: one signature, one encoding.
        assertRefused(.signatureInvalid) { _ = try self.verify(passkey) { _, _, signature in
            signature = [0x30, 0x81, signature[1]] + signature[2...]
        } }
    }

    func testAnotherKeysSignatureIsRefused() throws {
        let passkey = try ForgedPasskey()
        let other = try ForgedPasskey()
        assertRefused(.signatureInvalid) { _ = try self.verify(passkey, stored: try self.stored(other)) }
    }

    func testClientDataChecks() throws {
        let passkey = try ForgedPasskey()
        assertRefused(.typeMismatch) { _ = try self.verify(passkey, type: "webauthn.create") }
        var elsewhere = passkey
        elsewhere.origin = "https://evil.test"
        assertRefused(.originNotAllowed) { _ = try self.verify(elsewhere) }
        var framed = passkey
        framed.crossOrigin = true
        assertRefused(.crossOrigin) { _ = try self.verify(framed) }
        assertRefused(.challengeMismatch) { _ = try self.verify(passkey) { clientData, _, _ in
            clientData = passkey.clientDataJSON(type: "webauthn.get", challenge: Array("a replayed challenge".utf8))
        } }
    }

    func testFlagsAndRPID() throws {
        var passkey = try ForgedPasskey()
        passkey.flags = 0x04
        assertRefused(.userNotPresent) { _ = try self.verify(passkey) }
        passkey.flags = 0x01
        assertRefused(.userNotVerified) { _ = try self.verify(passkey) }
        XCTAssertFalse(try verify(passkey, requireUserVerification: false).userVerified)
        var elsewhere = try ForgedPasskey()
        elsewhere.rpID = "evil.test"
        assertRefused(.rpIDMismatch) { _ = try self.verify(elsewhere, stored: try self.stored(elsewhere)) }
    }

    func testACounterThatDoesNotGrowMarksAClone() throws {
        var passkey = try ForgedPasskey()
        passkey.signCount = 7
        assertRefused(.counterNotIncreasing) { _ = try self.verify(passkey, stored: try self.stored(passkey, signCount: 7)) }
        assertRefused(.counterNotIncreasing) { _ = try self.verify(passkey, stored: try self.stored(passkey, signCount: 9)) }
        passkey.signCount = 0
        assertRefused(.counterNotIncreasing) { _ = try self.verify(passkey, stored: try self.stored(passkey, signCount: 3)) }
        // An authenticator without a counter (synced passkeys): 0 and 0 stay fine.
        XCTAssertEqual(try verify(passkey).signCount, 0)
    }

    func testBackupEligibilityCannotChange() throws {
        var passkey = try ForgedPasskey()
        passkey.flags = 0x05 | 0x08
        assertRefused(.malformed) { _ = try self.verify(passkey, stored: try self.stored(passkey, backupEligible: false)) }
        XCTAssertFalse(try verify(passkey, stored: try stored(passkey, backupEligible: true)).backedUp)
        passkey.flags = 0x05 | 0x18
        XCTAssertTrue(try verify(passkey, stored: try stored(passkey, backupEligible: true)).backedUp)
        passkey.flags = 0x05
        assertRefused(.malformed) { _ = try self.verify(passkey, stored: try self.stored(passkey, backupEligible: true)) }
    }

    func testTruncatedAndPaddedAuthenticatorDataIsRefused() throws {
        let passkey = try ForgedPasskey()
        assertRefused(.malformed) { _ = try self.verify(passkey) { _, authData, _ in authData.removeLast() } }
        assertRefused(.malformed) { _ = try self.verify(passkey) { _, authData, _ in authData.append(0) } }
    }
}
