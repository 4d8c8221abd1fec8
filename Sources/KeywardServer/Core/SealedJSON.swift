// Values a client carries for the server and hands back: sealed so that it can neither read nor change them.
import Crypto
import Foundation
import KeywardJOSE

/// A JSON object sealed with AES-256-GCM under a key derived from the master key for one purpose, as one
/// base64url string: what the server hands a browser or a client to give back later (an authorization code, a
/// pending authorization request, a pushed request's URI) without a row written for it. The additional data names
/// the purpose and the realm, so a value sealed for one use or realm does not open as another. Every node opens
/// what another sealed, since they share the master key.
struct SealedJSON: Sendable {
    private let key: SymmetricKey
    private let purpose: String

    /// Longest sealed value `open` reads; anything longer is refused unread.
    static let maxLength = 8192

    init(masterKey: MasterKey, purpose: String) {
        key = masterKey.derivedKey(purpose: purpose)
        self.purpose = purpose
    }

    func seal(_ object: JSONObject, realm: String) -> String {
        // AES-GCM sealing fails only for a key of the wrong size; the derived key is 32 bytes.
        let box = try! AES.GCM.seal(StrictJSON.serialize(.object(object)), using: key, authenticating: additionalData(realm))
        return Base64URL.encode(Array(box.combined!))
    }

    /// The object, when `text` was sealed for this purpose and realm and not changed since; nil otherwise.
    func open(_ text: String, realm: String) -> JSONObject? {
        guard text.utf8.count <= Self.maxLength, let bytes = try? Base64URL.decode(text), bytes.count > 12 + 16,
            let box = try? AES.GCM.SealedBox(combined: bytes),
            let plaintext = try? AES.GCM.open(box, using: key, authenticating: additionalData(realm))
        else { return nil }
        return try? StrictJSON.parseObject(Array(plaintext))
    }

    private func additionalData(_ realm: String) -> [UInt8] { Array((purpose + "\u{0}" + realm).utf8) }
}
