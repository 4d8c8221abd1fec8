// Reading clientDataJSON (Web Authentication Level 3 §5.8.1), the browser's account of the ceremony.
import Crypto
import KeywardJOSE

/// What the client says about the ceremony: its type, the challenge it was given, the origin that called it, and
/// whether it ran in a cross-origin frame. Read with KeywardJOSE's strict JSON (a member given twice is refused:
/// two parsers could each pick another `origin`); members the checks do not use are ignored, as §5.8.1 asks.
public struct CollectedClientData: Sendable {
    /// The ceremonies a client data can belong to.
    public enum Ceremony: String, Sendable {
        case create = "webauthn.create"
        case get = "webauthn.get"
    }

    /// More than any browser writes (a few hundred bytes); a bound on what is parsed, not a need.
    public static let maximumLength = 4096

    public let bytes: [UInt8]
    public let type: String
    /// The challenge as the client wrote it: base64url without padding.
    public let challenge: String
    public let origin: String
    public let crossOrigin: Bool
    public let topOrigin: String?

    public init(_ bytes: [UInt8]) throws(WebAuthnFailure) {
        guard bytes.count <= Self.maximumLength else {
            throw WebAuthnFailure(.malformed, "clientDataJSON has \(bytes.count) bytes, more than \(Self.maximumLength)")
        }
        let object: JSONObject
        do {
            object = try StrictJSON.parseObject(bytes)
        } catch {
            throw WebAuthnFailure(.malformed, "clientDataJSON is not a JSON object: \(error.message)")
        }
        guard let type = object["type"]?.stringValue else { throw WebAuthnFailure(.malformed, "clientDataJSON has no string type") }
        guard let challenge = object["challenge"]?.stringValue else { throw WebAuthnFailure(.malformed, "clientDataJSON has no string challenge") }
        guard let origin = object["origin"]?.stringValue else { throw WebAuthnFailure(.malformed, "clientDataJSON has no string origin") }
        var crossOrigin = false
        if let value = object["crossOrigin"] {
            guard let flag = value.boolValue else { throw WebAuthnFailure(.malformed, "clientDataJSON's crossOrigin is not a boolean") }
            crossOrigin = flag
        }
        var topOrigin: String?
        if let value = object["topOrigin"] {
            guard let text = value.stringValue else { throw WebAuthnFailure(.malformed, "clientDataJSON's topOrigin is not a string") }
            topOrigin = text
        }
        self.bytes = bytes
        self.type = type
        self.challenge = challenge
        self.origin = origin
        self.crossOrigin = crossOrigin
        self.topOrigin = topOrigin
    }

    /// SHA-256 of the bytes as received: what the authenticator signed beside its authenticator data.
    public var hash: [UInt8] { Array(SHA256.hash(data: bytes)) }

    /// §7.1 steps 7-10, §7.2 steps 11-14: the type, the challenge (compared as bytes, in constant time), the origin
    /// and, for a frame, the top origin, against what the relying party allows.
    func check(ceremony: Ceremony, challenge expected: [UInt8], origins: Set<String>, allowCrossOrigin: Bool) throws(WebAuthnFailure) {
        guard type == ceremony.rawValue else {
            throw WebAuthnFailure(.typeMismatch, "clientDataJSON.type is \"\(Self.shown(type))\", not \"\(ceremony.rawValue)\"")
        }
        guard let given = try? Base64URL.decode(challenge), ConstantTime.equal(given, expected) else {
            throw WebAuthnFailure(.challengeMismatch, "clientDataJSON.challenge is not this ceremony's challenge")
        }
        guard origins.contains(origin) else {
            throw WebAuthnFailure(.originNotAllowed, "origin \"\(Self.shown(origin))\" is not one of the realm's WebAuthn origins")
        }
        if crossOrigin {
            guard allowCrossOrigin else { throw WebAuthnFailure(.crossOrigin, "the ceremony ran in a cross-origin frame") }
        }
        if let topOrigin, topOrigin != origin, !(allowCrossOrigin && origins.contains(topOrigin)) {
            throw WebAuthnFailure(.crossOrigin, "the ceremony ran in a frame of \"\(Self.shown(topOrigin))\"")
        }
    }

    /// A client's text in an error message: bounded, control characters dropped.
    static func shown(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(100).map(Character.init))
    }
}
