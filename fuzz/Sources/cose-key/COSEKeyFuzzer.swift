// Fuzzes the COSE credential key reader: no trap; an accepted key is ES256 on P-256, EdDSA on Ed25519 or RS256,
// its JWK goes with its algorithm, reading the same bytes again gives the same key, and no signature the fuzzer
// wrote verifies with it.
import FuzzSupport
import KeywardAttestation

/// Input: a COSE_Key as CBOR (one item, nothing after it); prefixes of the same bytes are tried as signatures.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(FuzzInput(data, size).bytes)
    guard let key = try? COSECredentialKey(bytes: bytes) else { return 0 }
    expect(COSECredentialKey.Algorithm.allCases.contains(key.algorithm), "an algorithm outside ES256, EdDSA, RS256")
    let again = try? COSECredentialKey(bytes: bytes)
    expect(again == key, "the same bytes read as another key")
    let message = Array("authenticatorData || clientDataHash".utf8)
    for length in [0, 64, 70, 72, 256] {
        let signature = Array(bytes.prefix(length)) + Array(repeating: 0x30, count: max(0, length - bytes.count))
        expect(!key.verify(signature: signature, over: message), "a signature made of the key's own bytes verified")
    }
    return 0
}
