// Reading the attested P-256 key from the COSE_Key form App Attest's authData carries it in.
import KeywardCBOR

/// An EC2 P-256 signing key in COSE_Key form (RFC 9052 §7, RFC 9053 §7.1) as authData carries it:
/// `{1 (kty): 2 (EC2), 3 (alg): -7 (ES256), -1 (crv): 1 (P-256), -2 (x): 32 bytes, -3 (y): 32 bytes}`.
struct COSEP256Key: Equatable {
    let x: [UInt8]
    let y: [UInt8]

    /// nil for anything else: another key type, algorithm or curve, or coordinates of the wrong size.
    init?(_ key: CBORValue) {
        guard key[1]?.integerValue == 2, key[3]?.integerValue == -7, key[-1]?.integerValue == 1,
            let x = key[-2]?.bytesValue, let y = key[-3]?.bytesValue, x.count == 32, y.count == 32
        else { return nil }
        self.x = x
        self.y = y
    }

    /// The uncompressed point, as `P256.Signing.PublicKey.x963Representation` writes it.
    var x963Representation: [UInt8] { [0x04] + x + y }
}
