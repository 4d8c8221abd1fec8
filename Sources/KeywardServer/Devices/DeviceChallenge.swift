// The stateless, HMAC-protected challenge a registration or key rotation answers, spent once.
import Crypto
import Foundation
import KeywardJOSE

/// The single-use challenge a registration or key rotation answers. Issuing one writes nothing: the app id and
/// the expiry travel inside the challenge under an HMAC (a key derived from the master key, so any node reads what
/// another issued), and anyone may ask for challenges without filling a table. Single use is enforced when one is
/// spent: its random part is recorded atomically in the replay store, and a second spend finds it there.
///
/// Wire form: base64url of version (1 byte) ‖ random (16) ‖ expiry in Unix seconds (8, big-endian) ‖
/// HMAC-SHA-256 over realm, app id and the preceding bytes, truncated to 16 bytes. 41 bytes, 55 characters.
struct DeviceChallenge: Sendable, Equatable {
    let realm: String
    let appId: String
    /// The random part: what the replay store records when the challenge is spent.
    let nonce: [UInt8]
    let expiresAt: Date

    static let keyPurpose = "keyward device challenge v1"
    private static let version: UInt8 = 1
    private static let macLength = 16
    private static let encodedLength = 1 + 16 + 8 + macLength

    static func issue(realm: String, appId: String, now: Date, lifetime: TimeInterval) -> DeviceChallenge {
        DeviceChallenge(
            realm: realm, appId: appId, nonce: SecureRandom.bytes(16),
            expiresAt: Date(timeIntervalSince1970: (now.timeIntervalSince1970 + lifetime).rounded(.down))
        )
    }

    func encoded(key: SymmetricKey) -> String {
        let body = [Self.version] + nonce + Self.bigEndian(UInt64(expiresAt.timeIntervalSince1970))
        return Base64URL.encode(body + Self.mac(body, realm: realm, appId: appId, key: key))
    }

    enum Refusal: Error, Equatable {
        /// Not a challenge this service issued for this realm and app (or not a challenge at all).
        case invalid
        case expired
    }

    /// The challenge `text` stands for, when this service issued it for `realm` and `appId` and it has not expired.
    static func open(_ text: String, realm: String, appId: String, key: SymmetricKey, now: Date) throws(Refusal) -> DeviceChallenge {
        guard text.utf8.count <= 128, let bytes = try? Base64URL.decode(text), bytes.count == encodedLength, bytes[0] == version else {
            throw .invalid
        }
        let body = Array(bytes.prefix(encodedLength - macLength))
        let expected = mac(body, realm: realm, appId: appId, key: key)
        guard ConstantTime.equal(expected, bytes.suffix(macLength)) else { throw .invalid }
        let seconds = body[17..<25].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let challenge = DeviceChallenge(
            realm: realm, appId: appId, nonce: Array(body[1..<17]), expiresAt: Date(timeIntervalSince1970: TimeInterval(seconds))
        )
        guard now < challenge.expiresAt else { throw .expired }
        return challenge
    }

    private static func mac(_ body: [UInt8], realm: String, appId: String, key: SymmetricKey) -> [UInt8] {
        // Lengths first, so no two (realm, app id) pairs give the same input.
        var input = bigEndian(UInt64(realm.utf8.count)) + Array(realm.utf8)
        input += bigEndian(UInt64(appId.utf8.count)) + Array(appId.utf8)
        input += body
        return Array(HMAC<SHA256>.authenticationCode(for: input, using: key).prefix(macLength))
    }

    private static func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }
}
