// Tests: published RFC examples for thumbprints, DPoP proofs and JWS signatures verify as the RFCs say.
import Foundation
import XCTest
@testable import KeywardJOSE

/// Published RFC examples (IETF code components): if these fail, we disagree with the rest of the world.
final class RFCVectorTests: XCTestCase {
    // RFC 7638 §3.1
    static let rfc7638Key = #"{"kty":"RSA","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw","e":"AQAB","alg":"RS256","kid":"2011-04-29"}"#

    // RFC 9449 Figures 2/5/8
    static let rfc9449Key = #"{"kty":"EC","crv":"P-256","x":"l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs","y":"9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA"}"#
    static let rfc9449TokenProof = "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwieCI6Imw4dEZyaHgtMzR0VjNoUklDUkRZOXpDa0RscEJoRjQyVVFVZldWQVdCRnMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFqSG10NnY5VERWclUwQ2R2R1JEQSIsImNydiI6IlAtMjU2In19.eyJqdGkiOiItQndDM0VTYzZhY2MybFRjIiwiaHRtIjoiUE9TVCIsImh0dSI6Imh0dHBzOi8vc2VydmVyLmV4YW1wbGUuY29tL3Rva2VuIiwiaWF0IjoxNTYyMjYyNjE2fQ.2-GxA6T8lP4vfrg8v-FdWP0A0zdrj8igiMLvqRMUvwnQg4PtFLbdLXiOSsX0x7NVY-FNyJK70nfbV37xRZT3Lg"
    static let rfc9449ResourceProof = "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwieCI6Imw4dEZyaHgtMzR0VjNoUklDUkRZOXpDa0RscEJoRjQyVVFVZldWQVdCRnMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFqSG10NnY5VERWclUwQ2R2R1JEQSIsImNydiI6IlAtMjU2In19.eyJqdGkiOiJlMWozVl9iS2ljOC1MQUVCIiwiaHRtIjoiR0VUIiwiaHR1IjoiaHR0cHM6Ly9yZXNvdXJjZS5leGFtcGxlLm9yZy9wcm90ZWN0ZWRyZXNvdXJjZSIsImlhdCI6MTU2MjI2MjYxOCwiYXRoIjoiZlVIeU8ycjJaM0RaNTNFc05yV0JiMHhXWG9hTnk1OUlpS0NBcWtzbVFFbyJ9.2oW9RP35yRqzhrtNP86L-Ey71EOptxRimPPToA1plemAgR6pxHF8y6-yqyVnmcw6Fy1dqd-jfxSYoMxhAJpLjA"
    static let rfc9449AccessToken = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"
    static let rfc9449JKT = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"

    // RFC 7515 A.2 (RS256) and A.3 (ES256): public keys and complete JWS representations.
    static let rfc7515A2Key = #"{"kty":"RSA","n":"ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ","e":"AQAB"}"#
    static let rfc7515A2 = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"
    static let rfc7515A3Key = #"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}"#
    static let rfc7515A3 = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"

    func testRFC7638Thumbprint() throws {
        XCTAssertEqual(try JWK(jsonString: Self.rfc7638Key).thumbprint(), "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
    }

    func testRFC9449Thumbprint() throws {
        XCTAssertEqual(try JWK(jsonString: Self.rfc9449Key).thumbprint(), Self.rfc9449JKT)
    }

    func testRFC9449AccessTokenHash() {
        XCTAssertEqual(DPoPProof.accessTokenHash(Self.rfc9449AccessToken), "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo")
    }

    func testRFC9449TokenRequestProofVerifies() async throws {
        let verifier = DPoPVerifier(replayCache: MemoryReplayCache())
        let verified = try await verifier.verify(
            proof: Self.rfc9449TokenProof, method: "POST", url: "https://server.example.com/token",
            expectedThumbprint: Self.rfc9449JKT, now: Date(timeIntervalSince1970: 1_562_262_616))
        XCTAssertEqual(verified.jti, "-BwC3ESc6acc2lTc")
        XCTAssertEqual(verified.thumbprint, Self.rfc9449JKT)
        XCTAssertEqual(verified.issuedAt, Date(timeIntervalSince1970: 1_562_262_616))
    }

    func testRFC9449ResourceProofVerifies() async throws {
        let verifier = DPoPVerifier(replayCache: MemoryReplayCache())
        let verified = try await verifier.verify(
            proof: Self.rfc9449ResourceProof, method: "GET", url: "https://resource.example.org/protectedresource",
            accessToken: Self.rfc9449AccessToken, expectedThumbprint: Self.rfc9449JKT,
            now: Date(timeIntervalSince1970: 1_562_262_618))
        XCTAssertEqual(verified.jti, "e1j3V_bKic8-LAEB")
    }

    func testRFC7515A2RS256Verifies() throws {
        let key = try JWK(jsonString: Self.rfc7515A2Key)
        let policy = JWTVerificationPolicy(allowedAlgorithms: [.rs256], keys: .single(key), issuer: "joe")
        let verified = try JWTVerifier.verify(Self.rfc7515A2, policy: policy, now: Date(timeIntervalSince1970: 1_300_819_000))
        XCTAssertEqual(verified.claims["http://example.com/is_root"], true)
        XCTAssertEqual(verified.algorithm, .rs256)
    }

    func testRFC7515A3ES256Verifies() throws {
        let key = try JWK(jsonString: Self.rfc7515A3Key)
        let policy = JWTVerificationPolicy(allowedAlgorithms: [.es256], keys: .single(key), issuer: "joe")
        let verified = try JWTVerifier.verify(Self.rfc7515A3, policy: policy, now: Date(timeIntervalSince1970: 1_300_819_000))
        XCTAssertEqual(verified.claims.int("exp"), 1_300_819_380)
    }

    func testRFC7515ExamplesExpireOnTime() {
        let key = try! JWK(jsonString: Self.rfc7515A3Key)
        let policy = JWTVerificationPolicy(allowedAlgorithms: [.es256], keys: .single(key), leeway: 30)
        XCTAssertJOSEError(.expired, try JWTVerifier.verify(Self.rfc7515A3, policy: policy,
                                                            now: Date(timeIntervalSince1970: 1_300_819_410)))
    }
}
