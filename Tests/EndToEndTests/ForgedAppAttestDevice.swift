// Test support: App Attest on Linux for KeywardKit's registrar, with forged-CA keys and per-key counters.
import AttestationTestSupport
import Crypto
import Foundation
import KeywardJOSE
import KeywardKit
import Synchronization

/// App Attest on Linux, for KeywardKit's registrar: what `AppAttestAttester` does on an iPhone, with the Secure
/// Enclave replaced by keys made here and Apple's CA by the forged one of `ForgedAppAttestation` (which the test server
/// pins). Each attestation makes a new App Attest key, as `generateKey` does; each assertion by a key advances that
/// key's counter, as the Secure Enclave does.
final class ForgedAppAttestDevice: Attester, Asserter {
    /// The template: its CA certifies every key made here.
    let forged: ForgedAppAttestation
    private let keys = Mutex<[String: (key: P256.Signing.PrivateKey, counter: UInt32)]>([:])

    struct UnknownKey: Error {
        let keyId: String
    }

    init(time: Date, appID: String) throws {
        var forged = try ForgedAppAttestation(time: time)
        forged.appID = appID
        self.forged = forged
    }

    func attestation(bindingNonce: [UInt8]) async throws -> JSONObject? {
        var attested = forged
        attested.credentialKey = P256.Signing.PrivateKey()
        attested.clientDataHash = bindingNonce
        let keyId = Data(attested.keyID).base64EncodedString()
        keys.withLock { $0[keyId] = (attested.credentialKey, 0) }
        return ["type": "app-attest", "keyId": .string(keyId), "object": .string(Data(try attested.object()).base64EncodedString())]
    }

    func assertion(keyId: String, clientDataHash: [UInt8]) async throws -> [UInt8] {
        let next = keys.withLock { keys -> (key: P256.Signing.PrivateKey, counter: UInt32)? in
            guard var entry = keys[keyId] else { return nil }
            entry.counter += 1
            keys[keyId] = entry
            return entry
        }
        guard let next else { throw UnknownKey(keyId: keyId) }
        return try ForgedAppAttestation.assertion(key: next.key, appID: forged.appID, counter: next.counter, clientDataHash: clientDataHash)
    }

    /// The public key of the App Attest key `keyId`.
    func publicKey(_ keyId: String) -> P256.Signing.PublicKey? { keys.withLock { $0[keyId]?.key.publicKey } }

    /// The key ids attested so far.
    var keyIds: Set<String> { keys.withLock { Set($0.keys) } }

    /// The last counter `keyId` asserted with (0 before its first assertion).
    func counter(_ keyId: String) -> UInt32? { keys.withLock { $0[keyId]?.counter } }
}
