// The WebAuthn registration checks (§7.1), each reached with a response that has exactly one thing wrong.
import AttestationTestSupport
import Crypto
import Foundation
import KeywardAttestation
import KeywardCBOR
import XCTest
import _CryptoExtras

final class WebAuthnRegistrationTests: XCTestCase {
    let party = WebAuthnRelyingParty(rpID: "keyward.test", origins: ["https://keyward.test", "android:apk-key-hash:abc"])
    let challenge = Array("a challenge of thirty-two bytes!".utf8)
    let time = Date(timeIntervalSince1970: 1_790_000_000)

    func register(
        _ passkey: ForgedPasskey, statement: ForgedPasskey.Statement = .none, type: String = "webauthn.create", challenge: [UInt8]? = nil,
        requireUserVerification: Bool = true, policy: WebAuthnAttestationPolicy = .none, mutate: (inout [UInt8], inout [UInt8]) -> Void = { _, _ in }
    ) async throws(WebAuthnFailure) -> WebAuthnRelyingParty.Registration {
        var (clientData, object) = try! passkey.registration(challenge: self.challenge, statement: statement, type: type)
        if let challenge { (clientData, object) = try! passkey.registration(challenge: challenge, statement: statement, type: type) }
        mutate(&clientData, &object)
        return try await party.verifyRegistration(
            clientDataJSON: clientData, attestationObject: object, challenge: self.challenge, requireUserVerification: requireUserVerification,
            attestation: policy, at: time
        )
    }

    func assertRefused(_ reason: WebAuthnReason, file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> Void) async {
        do {
            try await body()
            XCTFail("accepted; expected \(reason.rawValue)", file: file, line: line)
        } catch let failure as WebAuthnFailure {
            XCTAssertEqual(failure.reason, reason, failure.detail, file: file, line: line)
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
    }

    func testEachAcceptedAlgorithmRegisters() async throws {
        for algorithm in [-7, -8, -257] {
            let passkey = try ForgedPasskey(algorithm: algorithm)
            let registration = try await register(passkey)
            XCTAssertEqual(registration.key.algorithm.rawValue, Int64(algorithm))
            XCTAssertEqual(registration.credentialID, passkey.credentialID)
            XCTAssertEqual(registration.publicKeyBytes, passkey.key.coseKey.encoded)
            XCTAssertEqual(registration.attestation, WebAuthnAttestationResult(format: "none", trusted: false))
            XCTAssertTrue(registration.userVerified)
        }
    }

    func testBackupFlagsAreReported() async throws {
        var passkey = try ForgedPasskey()
        passkey.flags |= 0x18
        let registration = try await register(passkey)
        XCTAssertTrue(registration.backupEligible)
        XCTAssertTrue(registration.backedUp)
    }

    func testAnotherCeremonyTypeIsRefused() async {
        await assertRefused(.typeMismatch) { _ = try await self.register(try! ForgedPasskey(), type: "webauthn.get") }
        await assertRefused(.typeMismatch) { _ = try await self.register(try! ForgedPasskey(), type: "payment.get") }
    }

    func testAnotherChallengeIsRefused() async {
        await assertRefused(.challengeMismatch) { _ = try await self.register(try! ForgedPasskey(), challenge: Array("another challenge".utf8)) }
    }

    func testAnOriginOutsideTheListIsRefused() async throws {
        for origin in ["https://evil.test", "https://keyward.test:8443", "http://keyward.test", "https://sub.keyward.test", "https://keyward.test/"] {
            var passkey = try ForgedPasskey()
            passkey.origin = origin
            await assertRefused(.originNotAllowed) { _ = try await self.register(passkey) }
        }
        var app = try ForgedPasskey()
        app.origin = "android:apk-key-hash:abc"
        _ = try await register(app)
    }

    func testACrossOriginCeremonyIsRefused() async throws {
        var passkey = try ForgedPasskey()
        passkey.crossOrigin = true
        await assertRefused(.crossOrigin) { _ = try await self.register(passkey) }
        passkey.crossOrigin = false
        _ = try await register(passkey)
    }

    func testAnotherRPIDIsRefused() async throws {
        var passkey = try ForgedPasskey()
        passkey.rpID = "evil.test"
        await assertRefused(.rpIDMismatch) { _ = try await self.register(passkey) }
    }

    func testUserPresenceIsRequiredAndVerificationWhenAsked() async throws {
        var passkey = try ForgedPasskey()
        passkey.flags = 0x44  // UV and AT, not UP
        await assertRefused(.userNotPresent) { _ = try await self.register(passkey) }
        passkey.flags = 0x41  // UP and AT, not UV
        await assertRefused(.userNotVerified) { _ = try await self.register(passkey) }
        let registration = try await register(passkey, requireUserVerification: false)
        XCTAssertFalse(registration.userVerified)
    }

    func testUnsupportedKeysAreRefused() async throws {
        var passkey = try ForgedPasskey()
        let point = Array(P384.Signing.PrivateKey().publicKey.x963Representation)
        passkey.coseKey = .map([
            CBORMapEntry(.integer(1), .integer(2)), CBORMapEntry(.integer(3), .integer(-35)), CBORMapEntry(.integer(-1), .integer(2)),
            CBORMapEntry(.integer(-2), .bytes(Array(point[1..<49]))), CBORMapEntry(.integer(-3), .bytes(Array(point[49...]))),
        ])
        await assertRefused(.unsupportedAlgorithm) { _ = try await self.register(passkey) }
        // ES256 named on an OKP key.
        passkey.coseKey = .map([
            CBORMapEntry(.integer(1), .integer(1)), CBORMapEntry(.integer(3), .integer(-7)), CBORMapEntry(.integer(-1), .integer(6)),
            CBORMapEntry(.integer(-2), .bytes(Array(repeating: 1, count: 32))),
        ])
        await assertRefused(.unsupportedAlgorithm) { _ = try await self.register(passkey) }
        // No alg at all.
        passkey.coseKey = .map([CBORMapEntry(.integer(1), .integer(2)), CBORMapEntry(.integer(-1), .integer(1))])
        await assertRefused(.malformed) { _ = try await self.register(passkey) }
        // A point not on the curve.
        passkey.coseKey = .map([
            CBORMapEntry(.integer(1), .integer(2)), CBORMapEntry(.integer(3), .integer(-7)), CBORMapEntry(.integer(-1), .integer(1)),
            CBORMapEntry(.integer(-2), .bytes(Array(repeating: 1, count: 32))), CBORMapEntry(.integer(-3), .bytes(Array(repeating: 2, count: 32))),
        ])
        await assertRefused(.malformed) { _ = try await self.register(passkey) }
        // RSA below 2048 bits.
        let weak = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024)).publicKey.getKeyPrimitives()
        passkey.coseKey = .map([
            CBORMapEntry(.integer(1), .integer(3)), CBORMapEntry(.integer(3), .integer(-257)),
            CBORMapEntry(.integer(-1), .bytes(Array(weak.modulus))), CBORMapEntry(.integer(-2), .bytes(Array(weak.publicExponent))),
        ])
        await assertRefused(.unsupportedAlgorithm) { _ = try await self.register(passkey) }
    }

    func testMalformedInputsAreRefusedAsMalformed() async throws {
        let passkey = try ForgedPasskey()
        let cases: [(String, (inout [UInt8], inout [UInt8]) -> Void)] = [
            ("client data not JSON", { clientData, _ in clientData = Array("not json".utf8) }),
            ("client data with origin twice", { clientData, _ in
                clientData = Array(#"{"type":"webauthn.create","challenge":"x","origin":"https://keyward.test","origin":"https://evil.test"}"#.utf8)
            }),
            ("client data too long", { clientData, _ in clientData += Array(repeating: 0x20, count: 5000) }),
            ("object not CBOR", { _, object in object = [0xFF, 0x00] }),
            ("object with trailing bytes", { _, object in object.append(0x00) }),
            ("object too large", { _, object in object = CBORValue.bytes(Array(repeating: 0, count: 20_000)).encoded }),
            ("object not a map", { _, object in object = CBORValue.array([]).encoded }),
            ("object with an indefinite length", { _, object in object[0] = 0xBF }),
            ("object nested too deep", { _, object in
                var value = CBORValue.map([])
                for _ in 0..<10 { value = .array([value]) }
                object = value.encoded
            }),
        ]
        for (name, mutate) in cases {
            do {
                _ = try await register(passkey, mutate: mutate)
                XCTFail("\(name): accepted")
            } catch {
                XCTAssertTrue([.malformed, .challengeMismatch].contains(error.reason), "\(name): \(error)")
            }
        }
    }

    func testAuthenticatorDataMustBeExactlyWhatItsFlagsAnnounce() async throws {
        var passkey = try ForgedPasskey()
        passkey.flags = 0x05  // UP | UV, no AT: a registration without its credential
        await assertRefused(.malformed) { _ = try await self.register(passkey) }
        passkey.flags = 0x45 | 0x10  // BS without BE
        await assertRefused(.malformed) { _ = try await self.register(passkey) }
        passkey.flags = 0x45 | 0x80  // ED, and no extensions follow
        await assertRefused(.malformed) { _ = try await self.register(passkey) }
        passkey.flags = 0x45
        passkey.credentialID = Array(repeating: 7, count: 1024)
        await assertRefused(.malformed) { _ = try await self.register(passkey) }
    }

    func testPackedSelfAttestationIsVerifiedButNotTrusted() async throws {
        for algorithm in [-7, -8, -257] {
            let passkey = try ForgedPasskey(algorithm: algorithm)
            let registration = try await register(passkey, statement: .packedSelf)
            XCTAssertEqual(registration.attestation, WebAuthnAttestationResult(format: "packed", trusted: false))
            await assertRefused(.attestationUntrusted) { _ = try await self.register(passkey, statement: .packedSelf, policy: .direct(packedRoots: nil)) }
        }
        // A signature over other bytes.
        let passkey = try ForgedPasskey()
        await assertRefused(.attestationInvalid) {
            _ = try await self.register(passkey, statement: .packedSelf) { _, object in
                var value = try! CBORReader.decode(object)
                let entries = value.mapEntries!.map { entry in
                    guard entry.key == .text("attStmt") else { return entry }
                    return CBORMapEntry(entry.key, .map([CBORMapEntry(.text("alg"), .integer(-7)), CBORMapEntry(.text("sig"), .bytes(Array(repeating: 0x30, count: 70)))]))
                }
                value = .map(entries)
                object = value.encoded
            }
        }
    }

    func testPackedWithAChainIsTrustedOnlyToTheRealmsRoots() async throws {
        var passkey = try ForgedPasskey()
        passkey.aaguid = Array(repeating: 0xAB, count: 16)
        let maker = try ForgedPasskeyCA(time: time)
        let registration = try await register(passkey, statement: .packedCertified(maker), policy: .direct(packedRoots: PinnedRoots([maker.certificate])))
        XCTAssertEqual(registration.attestation, WebAuthnAttestationResult(format: "packed", trusted: true))
        XCTAssertEqual(registration.aaguid, passkey.aaguid)

        let untrusted = try await register(passkey, statement: .packedCertified(maker))
        XCTAssertEqual(untrusted.attestation, WebAuthnAttestationResult(format: "packed", trusted: false))

        let another = try ForgedPasskeyCA(time: time)
        await assertRefused(.attestationUntrusted) {
            _ = try await self.register(passkey, statement: .packedCertified(maker), policy: .direct(packedRoots: PinnedRoots([another.certificate])))
        }
        var wrongUnit = maker
        wrongUnit.organizationalUnit = "Something Else"
        await assertRefused(.attestationInvalid) { _ = try await self.register(passkey, statement: .packedCertified(wrongUnit)) }
    }

    func testAnAAGUIDTheCertificateDoesNotNameIsRefused() async throws {
        var passkey = try ForgedPasskey()
        passkey.aaguid = Array(repeating: 0xAB, count: 16)
        let maker = try ForgedPasskeyCA(time: time)
        // The certificate is issued for the passkey's AAGUID, then the authenticator data claims another.
        await assertRefused(.attestationInvalid) {
            _ = try await self.register(passkey, statement: .packedCertified(maker)) { _, object in
                var value = try! CBORReader.decode(object)
                value = .map(value.mapEntries!.map { entry in
                    guard entry.key == .text("authData"), var bytes = entry.value.bytesValue else { return entry }
                    bytes[37] ^= 0xFF
                    return CBORMapEntry(entry.key, .bytes(bytes))
                })
                object = value.encoded
            }
        }
    }

    func testNoneMustBeEmptyAndIsRefusedWhenTheRealmAsksForAttestation() async throws {
        let passkey = try ForgedPasskey()
        await assertRefused(.attestationInvalid) {
            _ = try await self.register(passkey, statement: .custom(format: "none", statement: .map([CBORMapEntry(.text("x"), .integer(1))])))
        }
        await assertRefused(.attestationUntrusted) { _ = try await self.register(passkey, policy: .direct(packedRoots: nil)) }
    }

    func testOtherFormatsAreRefusedByName() async throws {
        let passkey = try ForgedPasskey()
        for format in ["tpm", "android-key", "android-safetynet", "fido-u2f", "apple-appattest", "compound"] {
            do {
                _ = try await register(passkey, statement: .custom(format: format, statement: .map([])))
                XCTFail("\(format) accepted")
            } catch {
                XCTAssertEqual(error.reason, .attestationFormatUnsupported)
                XCTAssertTrue(error.detail.contains(format), error.detail)
            }
        }
    }

    func testAnAppleStatementIsCheckedAndChainedToApplesRoot() async throws {
        let passkey = try ForgedPasskey()
        let maker = try ForgedPasskeyCA(time: time)
        // Right in every respect but its root: Apple's is the only one an apple statement may lead to.
        await assertRefused(.attestationUntrusted) { _ = try await self.register(passkey, statement: .apple(maker)) }
        let (clientData, object) = try passkey.registration(challenge: challenge, statement: .apple(maker))
        let registration = try await party.verifyRegistration(
            clientDataJSON: clientData, attestationObject: object, challenge: challenge, requireUserVerification: true,
            appleRoots: PinnedRoots([maker.certificate]), at: time
        )
        XCTAssertEqual(registration.attestation, WebAuthnAttestationResult(format: "apple", trusted: true))

        await assertRefused(.attestationInvalid) { _ = try await self.register(passkey, statement: .custom(format: "apple", statement: .map([]))) }
        await assertRefused(.attestationInvalid) {
            _ = try await self.register(passkey, statement: .apple(maker, certifiedKey: P256.Signing.PrivateKey().publicKey))
        }
        await assertRefused(.attestationInvalid) {
            _ = try await self.register(passkey, statement: .apple(maker, nonce: Array(repeating: 1, count: 32)))
        }
    }
}
