// The keys and clocks the JOSE fuzz targets verify with; the corpus seeds were made for exactly these.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeywardJOSE

/// Published keys (their RFC example tokens are in the corpus) and one private key, so that a target can sign
/// what the fuzzer writes and reach the checks that come after the signature.
public enum FixtureKeys {
    /// RFC 7515 A.2 (RS256).
    public static let rsa = key(#"{"kty":"RSA","kid":"rsa-7515","n":"ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ","e":"AQAB"}"#)
    /// RFC 7515 A.3 (ES256).
    public static let ec = key(#"{"kty":"EC","kid":"ec-7515","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}"#)
    /// RFC 9449 figures (the DPoP examples' ES256 key).
    public static let dpopExample = key(#"{"kty":"EC","crv":"P-256","x":"l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs","y":"9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA"}"#)
    /// RFC 8037 A.1 (Ed25519); its private half is `signer`.
    public static let ed25519 = key(#"{"kty":"OKP","kid":"ed-8037","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#)

    /// RFC 8037 A.1's private key. Ed25519 signatures are deterministic, so a signed input always gives the same
    /// token and libFuzzer sees the same coverage for the same input.
    public static let signer: SigningKey = {
        do {
            return try SigningKey(algorithm: .edDSA, serialized: Base64URL.decode("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"))
        } catch {
            fatalError("fixture signing key: \(error)")
        }
    }()

    public static let set = JWKSet(keys: [rsa, ec, ed25519])

    private static func key(_ json: String) -> JWK {
        do {
            return try JWK(jsonString: json)
        } catch {
            fatalError("fixture key: \(error)")
        }
    }

    /// Signs the fuzzer's header and payload text byte for byte with `signer`.
    public static func sign(header: [UInt8], payload: [UInt8]) -> String {
        do {
            return try JWS.sign(headerBytes: header, payload: payload, key: signer)
        } catch {
            fatalError("Ed25519 signing failed: \(error)")
        }
    }
}
