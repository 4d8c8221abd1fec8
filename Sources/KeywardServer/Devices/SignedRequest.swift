// Reading a request signed by a registered device key, and the message that signature covers.
import Crypto
import Foundation
import KeywardJOSE
import KeywardWire
import HTTPTypes

/// A request signed by a registered device key. The signed message is
///
///     METHOD "\n" PATH[?QUERY] "\n" TIMESTAMP "\n" NONCE "\n" hex(SHA-256(BODY))
///
/// with the method upper-case, the path and query exactly as sent, the timestamp in Unix seconds, the nonce from
/// its header, and the body's digest in lowercase hex (of zero bytes for a request without one). The nonce is inside
/// the message: a design that leaves it outside lets a captured request be replayed with a fresh nonce.
struct SignedRequest: Sendable, Equatable {
    enum Header {
        static let appId = HTTPField.Name("X-App-ID")!
        static let deviceId = HTTPField.Name("X-Device-ID")!
        static let timestamp = HTTPField.Name("X-Keyward-Timestamp")!
        static let nonce = HTTPField.Name("X-Keyward-Nonce")!
        static let signature = HTTPField.Name("X-Keyward-Signature")!
        static let version = HTTPField.Name("X-Keyward-Sig-Version")!
    }

    /// What `X-Keyward-Signature` holds.
    enum Version: String, Sendable {
        /// base64 of the registered key's ECDSA P-256 / SHA-256 signature over the message (DER or r‖s).
        case deviceKey = "1"
        /// base64 of an App Attest assertion whose client data is the message (devices registered with App Attest).
        case appAttestAssertion = "appattest-1"
    }

    let appId: String
    let deviceId: String
    let timestamp: Int64
    let nonce: String
    let signature: [UInt8]
    let version: Version
    /// The bytes that were signed.
    let message: [UInt8]

    /// Reads the signing headers of a request (each exactly once). `target` is the path and query as sent.
    init(headers: HTTPFields, method: String, target: String, body: some Collection<UInt8>) throws(DeviceError) {
        func single(_ name: HTTPField.Name) throws(DeviceError) -> String {
            let values = headers[values: name]
            guard values.count == 1, let value = values.first, !value.isEmpty, value.utf8.count <= 4096 else {
                throw DeviceError(.unauthorized, .invalidSignature, values.isEmpty ? "missing header \(name)" : "header \(name) must appear once, 1-4096 bytes")
            }
            return value
        }
        appId = try single(Header.appId)
        deviceId = try single(Header.deviceId)
        let versionText = try single(Header.version)
        guard let version = Version(rawValue: versionText) else {
            throw DeviceError(.unauthorized, .invalidSignature, "\(Header.version) must be \"1\" (device key) or \"appattest-1\" (App Attest assertion)")
        }
        self.version = version
        let timestampText = try single(Header.timestamp)
        guard timestampText.utf8.count <= 12, timestampText.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let timestamp = Int64(timestampText) else {
            throw DeviceError(.unauthorized, .invalidSignature, "\(Header.timestamp) must be Unix seconds")
        }
        self.timestamp = timestamp
        nonce = try single(Header.nonce)
        guard (16...128).contains(nonce.utf8.count), nonce.utf8.allSatisfy(Self.isNonceByte) else {
            throw DeviceError(.unauthorized, .invalidSignature, "\(Header.nonce) must be 16-128 characters of letters, digits, '-' or '_' (a UUID fits)")
        }
        guard let signature = RegistrationRequest.base64(try single(Header.signature)), !signature.isEmpty else {
            throw DeviceError(.unauthorized, .invalidSignature, "\(Header.signature) must be base64")
        }
        self.signature = signature
        message = Self.message(method: method, target: target, timestamp: timestampText, nonce: nonce, body: body)
    }

    static func message(method: String, target: String, timestamp: String, nonce: String, body: some Collection<UInt8>) -> [UInt8] {
        SignedRequestMessage.bytes(
            method: method, target: target, timestamp: timestamp, nonce: nonce, bodyDigestHex: HexDigit.lowercase(SHA256.hash(data: Array(body)))
        )
    }

    private static func isNonceByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
