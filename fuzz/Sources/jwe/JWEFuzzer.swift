// Fuzzes JWE decryption (A256KW + A256GCM) with a fixed key, and Play Integrity verification behind it: no trap;
// an accepted token is exactly the one its content key, IV and header seal to (no second text for the same token);
// a token sealed here decrypts to its plaintext and no one-bit mutation of it ever decrypts; a verdict passes only
// what the policy allows.
import Crypto
import Foundation
import FuzzSupport
import KeywardAttestation
import KeywardJOSE

/// The fixed keys (fuzz/seeds.py derives the same key-encryption key for its seeds).
let keyEncryptionKey = Array(SHA256.hash(data: Array("keyward jwe fuzz key".utf8)))
let signingKey = try! P256.Signing.PrivateKey(rawRepresentation: SHA256.hash(data: Array("keyward play integrity fuzz signing key".utf8)))
let jwsSigner = try! SigningKey(algorithm: .es256, serialized: Array(signingKey.derRepresentation))
let playVerifier = try! PlayIntegrityVerifier(
    decryptionKey: Data(keyEncryptionKey).base64EncodedString(),
    verificationKey: signingKey.publicKey.derRepresentation.base64EncodedString()
)
/// What seeds.py writes its verdicts for: this package, this nonce, requests 20 s before this time.
let package = "com.example.keyward"
let nonce = "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s"
let verificationTime = Date(timeIntervalSince1970: 1_795_000_000)
let policy = PlayIntegrityPolicy(packageNames: [package], expectedNonce: nonce)

/// The refusals JWE.decrypt may give with a valid 32-byte key.
let decryptionCodes: Set<JOSEError.Code> = [
    .tooLarge, .malformed, .badBase64URL, .badJSON, .duplicateMember, .unsupportedCritical, .unsupportedCompression,
    .missingAlgorithm, .algorithmNotAllowed, .missingEncryption, .encryptionNotAllowed, .keyUnwrapFailed, .decryptionFailed,
]

/// Input: options byte, then the rest.
/// - bit 0 clear: the rest is a token, decrypted with the fixed key.
/// - bit 0 set: the rest is a plaintext the target seals itself (content key and IV derived from it), then decrypts,
///   then decrypts again with one bit flipped (position from the input's hash, bit from options bits 2-4).
///   With bit 1 set too, the rest is a verdict: signed ES256, sealed, verified by `PlayIntegrityVerifier`.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (options, rest) = FuzzInput(data, size).optionsAndRest
    if options & 1 == 0 {
        decryptToken(String(decoding: rest, as: UTF8.self))
    } else if options & 2 == 0 {
        sealThenMutate(Array(rest), flipBit: Int(options >> 2) % 7)
    } else {
        verifyVerdict(Array(rest), flipBit: Int(options >> 2) % 7)
    }
    return 0
}

func decryptToken(_ token: String) {
    let jwe: JWE
    do {
        jwe = try JWE.decrypt(token, keyEncryptionKey: keyEncryptionKey)
    } catch {
        expect(decryptionCodes.contains(error.code), "unexpected refusal \(error)")
        return
    }
    expect(jwe.header["alg"] == "A256KW" && jwe.header["enc"] == "A256GCM", "decrypted under header \(jwe.header)")
    expect(jwe.header["zip"] == nil && jwe.header["crit"] == nil, "decrypted with zip or crit")
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    expect(parts.count == 5, "decrypted \(parts.count) parts")
    guard let wrapped = try? Base64URL.decode(parts[1]), let iv = try? Base64URL.decode(parts[2]),
        let contentKey = try? AES.KeyWrap.unwrap(wrapped, using: SymmetricKey(data: keyEncryptionKey))
    else { expectationFailed("a decrypted token's key does not unwrap again") }
    expect(seal(jwe.plaintext, headerText: String(parts[0]), contentKey: contentKey, iv: iv) == token,
           "an accepted token is not the one its content key, IV and header seal to")
}

/// The compact serialization of `plaintext` sealed as RFC 7516 §5.1 says, under the fixed key.
func seal(_ plaintext: [UInt8], headerText: String, contentKey: SymmetricKey, iv: [UInt8]) -> String {
    let wrapped = try! AES.KeyWrap.wrap(contentKey, using: SymmetricKey(data: keyEncryptionKey))
    let box = try! AES.GCM.seal(plaintext, using: contentKey, nonce: AES.GCM.Nonce(data: iv), authenticating: Array(headerText.utf8))
    return [headerText, Base64URL.encode(wrapped), Base64URL.encode(iv), Base64URL.encode(box.ciphertext), Base64URL.encode(box.tag)]
        .joined(separator: ".")
}

/// A token for `plaintext` whose content key and IV are derived from it, so that the same input seals the same way.
func sealDeterministically(_ plaintext: [UInt8]) -> String {
    let digest = Array(SHA512.hash(data: plaintext))
    let header = Base64URL.encode(Array(#"{"alg":"A256KW","enc":"A256GCM"}"#.utf8))
    return seal(plaintext, headerText: header, contentKey: SymmetricKey(data: digest.prefix(32)), iv: Array(digest[32..<44]))
}

/// The token with one bit of one character flipped; the character picked by a hash of the input.
func flipped(_ token: String, seed: [UInt8], bit: Int) -> String {
    var text = Array(token.utf8)
    let hash = seed.reduce(UInt64(0xCBF2_9CE4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
    text[Int(hash % UInt64(text.count))] ^= UInt8(1 << bit)
    return String(decoding: text, as: UTF8.self)
}

func sealThenMutate(_ plaintext: [UInt8], flipBit: Int) {
    let token = sealDeterministically(plaintext)
    guard token.utf8.count <= JWE.defaultMaxSize else {
        expect((try? JWE.decrypt(token, keyEncryptionKey: keyEncryptionKey)) == nil, "a token over the size limit decrypted")
        return
    }
    do {
        let jwe = try JWE.decrypt(token, keyEncryptionKey: keyEncryptionKey)
        expect(jwe.plaintext == plaintext, "decrypted to another plaintext")
    } catch {
        expectationFailed("a token sealed here is refused: \(error)")
    }
    let mutated = flipped(token, seed: plaintext, bit: flipBit)
    do {
        _ = try JWE.decrypt(mutated, keyEncryptionKey: keyEncryptionKey)
        expectationFailed("a token with one bit flipped decrypted")
    } catch {
        expect(decryptionCodes.contains(error.code), "unexpected refusal \(error)")
    }
}

func verify(_ token: String) -> Result<PlayIntegrityResult, AttestationFailure> {
    runSynchronously { () async -> Result<PlayIntegrityResult, AttestationFailure> in
        do throws(AttestationFailure) {
            return .success(try await playVerifier.verify(token, policy: policy, at: verificationTime))
        } catch {
            return .failure(error)
        }
    }
}

func verifyVerdict(_ payload: [UInt8], flipBit: Int) {
    let signed = try! JWS.sign(headerBytes: Array(#"{"alg":"ES256"}"#.utf8), payload: payload, key: jwsSigner)
    let token = sealDeterministically(Array(signed.utf8))
    switch verify(token) {
    case .success(let result):
        let verdict = result.verdict
        expect(verdict.requestPackageName == package && verdict.packageName == package, "accepted another package")
        expect(verdict.appRecognitionVerdict == "PLAY_RECOGNIZED", "accepted \(verdict.appRecognitionVerdict)")
        expect(verdict.deviceRecognitionVerdicts.contains { policy.deviceIntegrity.acceptedVerdicts.contains($0) },
               "accepted device verdicts \(verdict.deviceRecognitionVerdicts)")
        expect(verdict.nonce != nil || verdict.requestHash != nil, "accepted without a nonce")
        let age = verificationTime.timeIntervalSince(result.requestedAt)
        expect(age <= policy.maxAge && -age <= policy.maxFutureSkew, "accepted a request \(age) s old")
        expect(result.checks.count == 7, "accepted after \(result.checks.count) checks")
    case .failure(let failure):
        expect(![.undecryptable, .signatureInvalid, .verifierUnavailable].contains(failure.reason),
               "a token sealed and signed here is refused as \(failure)")
    }
    guard case .failure(let failure) = verify(flipped(token, seed: payload, bit: flipBit)) else {
        expectationFailed("a Play Integrity token with one bit flipped verified")
    }
    expect([.undecryptable, .malformed].contains(failure.reason), "a flipped token refused as \(failure)")
}
