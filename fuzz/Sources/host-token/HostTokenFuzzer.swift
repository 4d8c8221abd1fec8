// Fuzzes what a host-token exchange parses: the JWT under the issuer policy the jwt-bearer grant uses (typ JWT,
// iss, aud, sub, exp, jti, nbf or iat, a lifetime cap, kid optional) and a certificate's SubjectPublicKeyInfo DER
// read into a JWK. Nothing the policy forbids is accepted; a key read from DER survives its own JWK form.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FuzzFixtures
import FuzzSupport
import KeywardJOSE

let now = Date(timeIntervalSince1970: 1_750_000_000)
let issuer = "https://auth.customer.example"
let audience = "http://keyward.test/realms/demo"

/// The grant's policy for an issuer allowing RS256 and EdDSA (the fixture signer), with the default 900 s lifetime,
/// 30 s leeway and jti required; the keys are the fixture set with kid optional, as for a JWKS issuer.
let policy = JWTVerificationPolicy(
    allowedAlgorithms: [.rs256, .edDSA], keys: .kidOptional(FixtureKeys.set), expectedType: "JWT",
    requiredClaims: ["iss", "sub", "exp", "jti"], issuer: issuer, audience: audience, leeway: 30, maxLifetime: 900, maxSize: 8192
)

/// Input: a mode byte, then by mode: 0 a compact token; 1 header JSON, newline, payload JSON, signed by the
/// fixture Ed25519 key so the claim checks behind the signature are reached; 2 SubjectPublicKeyInfo DER.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (mode, rest) = FuzzInput(data, size).optionsAndRest
    switch mode % 3 {
    case 0: checkToken(String(decoding: rest, as: UTF8.self))
    case 1:
        let (header, payload) = FuzzInput.split(rest)
        checkToken(FixtureKeys.sign(header: header, payload: payload))
    default: checkPublicKeyInfo(Array(rest))
    }
    return 0
}

func checkToken(_ compact: String) {
    guard let verified = try? JWTVerifier.verify(compact, policy: policy, now: now) else { return }
    let header = verified.header, claims = verified.claims
    expect(policy.allowedAlgorithms.contains(verified.algorithm), "accepted \(verified.algorithm)")
    let typ = header["typ"]?.stringValue?.lowercased()
    expect(typ == "jwt" || typ == "application/jwt", "accepted typ \(String(describing: typ))")
    expect(claims["iss"]?.stringValue == issuer, "accepted another issuer")
    let aud = claims["aud"]
    expect(aud?.stringValue == audience || aud?.arrayValue?.contains(.string(audience)) == true, "accepted another audience")
    expect(claims["sub"] != nil && claims["sub"] != .null, "accepted without sub")
    expect(claims["jti"] != nil && claims["jti"] != .null, "accepted without jti")
    guard let exp = claims["exp"]?.numberValue else { expectationFailed("accepted without a numeric exp") }
    let time = now.timeIntervalSince1970
    expect(time < exp + policy.leeway, "accepted an expired token")
    guard let start = claims["nbf"]?.numberValue ?? claims["iat"]?.numberValue else { expectationFailed("accepted without nbf or iat") }
    expect(exp - start <= 900, "accepted a lifetime over the cap")
    if let kid = header["kid"] {
        expect(kid.stringValue == verified.key.kid, "a kid given was not matched exactly")
    }
}

func checkPublicKeyInfo(_ der: [UInt8]) {
    guard let key = try? JWK(subjectPublicKeyInfo: der) else { return }
    expectKeyRoundTrip(key)
}
