// Fuzzes DPoP proof verification (RFC 9449 §4.3): no trap, and an accepted proof satisfies every check the
// request asked for (method, URL, time window, key binding, access token hash, nonce, replay cache).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FuzzFixtures
import FuzzSupport
import KeywardJOSE

/// The RFC 9449 token request proof's iat: the example proofs in the corpus are fresh at this instant.
let now = Date(timeIntervalSince1970: 1_562_262_616)
let accessToken = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"
let nonce = "eyJ7S_zG.eyJH0-Z.HX4w-7v"
let deviceAlgorithms: Set<JWSAlgorithm> = [.rs256, .rs384, .rs512, .es256, .es384, .es512]

/// Never saw a jti before, or (option bit 6) cannot be asked: the verifier must then fail closed.
struct FixtureReplayCache: DPoPReplayCache {
    struct Unavailable: Error {}
    let available: Bool

    func recordOnce(jti: String, keyThumbprint: String, expiresAt: Date, now: Date) async throws -> Bool {
        guard available else { throw Unavailable() }
        return true
    }
}

/// Input: options byte, then a proof, or (bit 7) header JSON, newline, claims JSON, signed here with the fixture
/// Ed25519 key. Options: bit 0 POST to the token endpoint (else GET of the RFC's resource), bit 1 an access token
/// (ath required), bit 2 the expected key thumbprint, bit 3 an expected nonce, bit 4 a stored verification key
/// instead of the header jwk, bit 5 the push-MFA device algorithms only, bit 6 a replay cache that fails.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (options, rest) = FuzzInput(data, size).optionsAndRest
    let signed = options & 0x80 != 0
    let proof: String
    if signed {
        let (header, claims) = FuzzInput.split(rest)
        proof = FixtureKeys.sign(header: header, payload: claims)
    } else {
        proof = String(decoding: rest, as: UTF8.self)
    }
    let key = signed ? FixtureKeys.ed25519 : FixtureKeys.dpopExample
    let method = options & 1 != 0 ? "POST" : "GET"
    let url = options & 1 != 0 ? "https://server.example.com/token" : "https://resource.example.org/protectedresource"
    let token = options & 2 != 0 ? accessToken : nil
    let thumbprint = options & 4 != 0 ? key.thumbprint() : nil
    let expectedNonce = options & 8 != 0 ? nonce : nil
    let storedKey = options & 0x10 != 0 ? key : nil
    let verifier = DPoPVerifier(
        options: .init(allowedAlgorithms: options & 0x20 != 0 ? deviceAlgorithms : Set(JWSAlgorithm.allCases)),
        replayCache: FixtureReplayCache(available: options & 0x40 == 0)
    )

    let result = runSynchronously { () async -> Result<DPoPVerifier.Verified, DPoPError> in
        do throws(DPoPError) {
            return .success(try await verifier.verify(
                proof: proof, method: method, url: url, accessToken: token, expectedThumbprint: thumbprint,
                expectedNonce: expectedNonce, verificationKey: storedKey, now: now))
        } catch {
            return .failure(error)
        }
    }
    guard case .success(let verified) = result else { return 0 }

    let claims = verified.claims
    expect(options & 0x40 == 0, "accepted although the replay cache failed")
    expect(verified.header["typ"]?.stringValue == "dpop+jwt", "accepted a typ other than dpop+jwt")
    let algorithm = JWSAlgorithm(rawValue: verified.header["alg"]?.stringValue ?? "")
    expect(algorithm.map(verifier.options.allowedAlgorithms.contains) == true, "accepted an algorithm outside the allow-list")
    expect(!verified.jti.isEmpty && verified.jti.utf8.count <= verifier.options.maxJTILength, "accepted jti of \(verified.jti.utf8.count) bytes")
    expect(claims["jti"]?.stringValue == verified.jti, "jti is not the claim")
    expect(claims["htm"]?.stringValue == method, "accepted another method")
    expect(claims["htu"]?.stringValue.flatMap(HTU.normalize) == HTU.normalize(url), "accepted another URL")
    let window = (now.timeIntervalSince1970 - verifier.options.maxAge)...(now.timeIntervalSince1970 + verifier.options.maxFutureSkew)
    guard let iat = claims["iat"]?.numberValue, window.contains(iat) else { expectationFailed("accepted iat outside the window") }
    // A Date counts from 2001, so a fractional iat may come back an ulp off.
    expect(abs(verified.issuedAt.timeIntervalSince1970 - iat) < 0.001, "issuedAt is not the iat claim")
    expect(verified.thumbprint == verified.jwk.thumbprint(), "thumbprint is not the key's")
    if let storedKey { expect(verified.jwk == storedKey, "verified with the header key instead of the stored one") }
    if let thumbprint { expect(verified.thumbprint == thumbprint, "accepted another key than the bound one") }
    if let token { expect(claims["ath"]?.stringValue == DPoPProof.accessTokenHash(token), "accepted a wrong ath") }
    if let expectedNonce { expect(claims["nonce"]?.stringValue == expectedNonce, "accepted a wrong nonce") }
    return 0
}
