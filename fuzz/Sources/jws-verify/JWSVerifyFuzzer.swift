// Fuzzes compact JWS parsing and JWT verification under a policy: no trap, and nothing is accepted that the
// policy forbids (algorithm, key, kid, type, issuer, audience, lifetime, expiry).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FuzzFixtures
import FuzzSupport
import KeywardJOSE

/// The RFC 7515 examples expire at 1300819380; every seed is valid at this instant.
let now = Date(timeIntervalSince1970: 1_300_819_000)

/// Input: options byte, algorithm mask byte, then either a compact JWS, or (option bit 7) header JSON, newline,
/// payload JSON, which the target signs with the fixture Ed25519 key so verification can succeed.
///
/// Options: bit 0 the key set (kid required; with bits 1-2 both set, kid optional: the fit keys are tried) instead
/// of one key, bits 1-2 which single key (RSA, EC, Ed25519),
/// bit 3 `typ` must be JWT, bit 4 `iss` must be "joe", bit 5 `aud` must include "keyward", bit 6 a 3600 s
/// lifetime cap. The mask byte's bits allow JWSAlgorithm.allCases in order (0: all of them).
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = FuzzInput(data, size)
    guard input.bytes.count >= 2 else { return 0 }
    let options = input.bytes[0], mask = input.bytes[1]
    let rest = UnsafeBufferPointer(rebasing: input.bytes[2...])

    let compact: String
    if options & 0x80 != 0 {
        let (header, payload) = FuzzInput.split(rest)
        compact = FixtureKeys.sign(header: header, payload: payload)
    } else {
        compact = String(decoding: rest, as: UTF8.self)
    }

    let allowed = Set(JWSAlgorithm.allCases.enumerated().filter { mask == 0 || mask & (1 << $0.offset) != 0 }.map(\.element))
    let single = [FixtureKeys.rsa, FixtureKeys.ec, FixtureKeys.ed25519, FixtureKeys.ed25519][Int(options >> 1 & 3)]
    let policy = JWTVerificationPolicy(
        allowedAlgorithms: allowed,
        keys: options & 1 == 0 ? .single(single) : options & 6 == 6 ? .kidOptional(FixtureKeys.set) : .set(FixtureKeys.set),
        expectedType: options & 8 != 0 ? "JWT" : nil,
        issuer: options & 0x10 != 0 ? "joe" : nil,
        audience: options & 0x20 != 0 ? "keyward" : nil,
        maxLifetime: options & 0x40 != 0 ? 3600 : nil
    )

    // Parsing alone: what parses keeps its structure.
    if let jws = try? JWS.parse(compact, maxSize: policy.maxSize) {
        expect(jws.header["alg"]?.stringValue != nil, "parsed a JWS without a string alg")
        expect(jws.header["crit"] == nil && jws.header["b64"] == nil, "parsed a JWS with crit or b64")
        expect(compact.utf8.starts(with: jws.signingInput), "signing input is not the start of the token")
        expect(Base64URL.encode(jws.signature) == compact.split(separator: ".", omittingEmptySubsequences: false).last.map(String.init),
               "signature part does not re-encode to itself")
    }

    guard let verified = try? JWTVerifier.verify(compact, policy: policy, now: now) else { return 0 }
    let header = verified.header, claims = verified.claims
    expect(allowed.contains(verified.algorithm), "accepted \(verified.algorithm) outside the allow-list")
    expect(header["alg"]?.stringValue == verified.algorithm.rawValue, "accepted alg differs from the header's")
    expect(verified.key.isCompatible(with: verified.algorithm), "accepted \(verified.algorithm) with an unfit key")
    expect(verified.key.alg == nil || verified.key.alg == verified.algorithm, "accepted against the key's pinned alg")
    switch policy.keys {
    case .set:
        expect(header["kid"]?.stringValue != nil && header["kid"]?.stringValue == verified.key.kid, "key set: kid not matched exactly")
    case .kidOptional(let set):
        if let kid = header["kid"] {
            expect(kid.stringValue != nil && kid.stringValue == verified.key.kid, "kid optional: a kid given was not matched exactly")
        } else {
            let tried = set.keys.filter { $0.isCompatible(with: verified.algorithm) }.prefix(JWTVerificationPolicy.maxKeysTried)
            expect(tried.contains(verified.key), "kid optional: verified with a key outside the tried ones")
        }
    case .single(let key):
        expect(verified.key == key, "single key: verified with another key")
        if let kid = header["kid"]?.stringValue, let own = key.kid { expect(kid == own, "single key: kid mismatch accepted") }
    }
    let time = now.timeIntervalSince1970
    guard let exp = claims["exp"]?.numberValue else { expectationFailed("accepted without exp") }
    expect(time < exp + policy.leeway, "accepted an expired token")
    if let nbf = claims["nbf"]?.numberValue { expect(nbf <= time + policy.leeway, "accepted before nbf") }
    if let iat = claims["iat"]?.numberValue { expect(iat <= time + policy.leeway, "accepted an iat in the future") }
    if policy.expectedType != nil {
        let typ = header["typ"]?.stringValue?.lowercased()
        expect(typ == "jwt" || typ == "application/jwt", "accepted typ \(String(describing: typ))")
    }
    if let issuer = policy.issuer { expect(claims["iss"]?.stringValue == issuer, "accepted another issuer") }
    if let audience = policy.audience {
        let aud = claims["aud"]
        expect(aud?.stringValue == audience || aud?.arrayValue?.contains(.string(audience)) == true, "accepted another audience")
    }
    if let maxLifetime = policy.maxLifetime {
        guard let start = claims["nbf"]?.numberValue ?? claims["iat"]?.numberValue else {
            expectationFailed("lifetime cap without nbf or iat")
        }
        expect(exp - start <= maxLifetime, "accepted a lifetime over the cap")
    }
    return 0
}
