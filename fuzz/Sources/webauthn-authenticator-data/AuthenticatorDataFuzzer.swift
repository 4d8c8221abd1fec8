// Fuzzes the WebAuthn authenticator data reader and the assertion check behind it: no trap; accepted data agrees
// with its own flags (AT and the attested credential, ED and the extensions, BS only with BE, an id of 1-1023
// bytes) and keeps its bytes whole; and an assertion made of the fuzzer's bytes never verifies with a stored key.
import Crypto
import FuzzSupport
import KeywardAttestation

/// A P-256 key nobody holds the private half of once the process started: `{1: 2, 3: -7, -1: 1, -2: x, -3: y}`.
let storedKey: COSECredentialKey = {
    let point = Array(P256.Signing.PrivateKey().publicKey.x963Representation)
    let cose: [UInt8] = [0xA5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20] + point[1..<33] + [0x22, 0x58, 0x20] + point[33..<65]
    return try! COSECredentialKey(bytes: cose)
}()
let party = WebAuthnRelyingParty(rpID: "keyward.test", origins: ["https://keyward.test"])

/// Input: the authenticator data. Then, split at its first 0x00 byte past the head, the same bytes as an assertion:
/// authenticator data before it, a signature after.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(FuzzInput(data, size).bytes)
    if let read = try? WebAuthnAuthenticatorData(bytes) {
        expect(read.bytes == bytes, "the bytes kept are not the bytes read")
        expect(read.rpIDHash == Array(bytes[0..<32]), "rpIdHash is not the first 32 bytes")
        expect((read.attestedCredential != nil) == read.flags.contains(.attestedCredentialData), "AT and the attested credential disagree")
        expect((read.extensions != nil) == read.flags.contains(.extensionData), "ED and the extensions disagree")
        expect(!read.flags.contains(.backupState) || read.flags.contains(.backupEligible), "BS accepted without BE")
        if let credential = read.attestedCredential {
            expect((1...1023).contains(credential.credentialID.count), "a credential id of \(credential.credentialID.count) bytes")
            expect(credential.aaguid.count == 16, "an AAGUID of \(credential.aaguid.count) bytes")
        }
    }
    let split = bytes.dropFirst(37).firstIndex(of: 0) ?? bytes.count
    let clientData = Array(#"{"type":"webauthn.get","challenge":"AAAAAAAAAAAAAAAAAAAAAA","origin":"https://keyward.test"}"#.utf8)
    let accepted = try? party.verifyAssertion(
        clientDataJSON: clientData, authenticatorData: Array(bytes[..<split]), signature: Array(bytes[min(split + 1, bytes.count)...]),
        challenge: Array(repeating: 0, count: 16), credential: .init(key: storedKey, signCount: 0, backupEligible: false), requireUserVerification: false
    )
    expect(accepted == nil, "an assertion the fuzzer wrote verified with a key it does not hold")
    return 0
}
