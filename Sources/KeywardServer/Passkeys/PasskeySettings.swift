// Per-realm passkey settings: whether passkeys are offered, the relying party's id and origins, what is asked of
// the authenticator.
import Foundation
import KeywardAttestation
import KeywardJOSE

/// What a realm decides about passkeys (`keyward realms update R --passkeys … --webauthn-…`), one JSON object per
/// realm in `passkey_settings`.
public struct PasskeySettings: RealmSettingsValue {
    /// Whether the realm's pages and endpoints offer passkeys.
    public enum Mode: String, Sendable, CaseIterable {
        /// Not offered: the endpoints answer `passkeys_disabled`, the pages show nothing of them.
        case off
        /// Offered beside the password: a button on the sign-in page, a section on the account page; as a second
        /// factor, after push approval.
        case optional
        /// Offered first: the sign-in page asks the browser for a passkey at once (autofill), and a passkey is the
        /// second factor tried first.
        case preferred
    }

    public enum UserVerification: String, Sendable, CaseIterable {
        /// Every ceremony must verify the person (biometrics or a PIN on the authenticator).
        case required
        /// Asked for, not required; a sign-in without it is a single factor (`amr` `hwk`).
        case preferred
    }

    public enum Attestation: String, Sendable, CaseIterable {
        /// No statement asked for or required (synced passkeys give none).
        case none
        /// A statement whose chain leads to Apple's WebAuthn root, or to a root the operator names for `packed`.
        case direct
    }

    public var mode = Mode.off
    /// The RP ID; nil: the host of `publicURL`.
    public var rpID: String?
    /// Origins accepted beside `publicURL`'s own: native apps (`android:apk-key-hash:…`) and related origins
    /// (Level 3 §5.11), which `/.well-known/webauthn` then lists.
    public var extraOrigins: [String] = []
    public var userVerification = UserVerification.required
    public var attestation = Attestation.none
    /// PEM certificates trusted as `packed` attestation roots when `attestation` is `direct`.
    public var attestationRootsPEM: String?
    /// A sign-in with a passkey goes on to the realm's second factor (push approval) as a password sign-in does.
    /// Off by default: a passkey with user verification is two factors already.
    public var secondStep = false

    public static let maximumOrigins = 20

    public init() {}

    public init(json: JSONObject) {
        if let mode = json["mode"]?.stringValue.flatMap(Mode.init(rawValue:)) { self.mode = mode }
        if let rpID = json["rpId"]?.stringValue, Self.isRPID(rpID) { self.rpID = rpID }
        if let origins = json["origins"]?.arrayValue {
            extraOrigins = origins.compactMap(\.stringValue).filter { Self.originProblem($0) == nil }.prefix(Self.maximumOrigins).map { $0 }
        }
        if let value = json["userVerification"]?.stringValue.flatMap(UserVerification.init(rawValue:)) { userVerification = value }
        if let value = json["attestation"]?.stringValue.flatMap(Attestation.init(rawValue:)) { attestation = value }
        if let pem = json["attestationRoots"]?.stringValue, (try? PinnedRoots(pem: pem)) != nil { attestationRootsPEM = pem }
        if let asked = json["secondStep"]?.boolValue { secondStep = asked }
    }

    public var jsonObject: JSONObject {
        var object: JSONObject = [
            "mode": .string(mode.rawValue), "origins": .array(extraOrigins.map(JSONValue.string)),
            "userVerification": .string(userVerification.rawValue), "attestation": .string(attestation.rawValue), "secondStep": .bool(secondStep),
        ]
        if let rpID { object["rpId"] = .string(rpID) }
        if let attestationRootsPEM { object["attestationRoots"] = .string(attestationRootsPEM) }
        return object
    }

    /// The RP ID in effect: the configured one, or `publicURL`'s host.
    public func effectiveRPID(publicURL: String) -> String {
        rpID ?? (URLComponents(string: publicURL)?.host ?? "localhost")
    }

    /// Every origin a ceremony may come from: `publicURL`'s, then the extra ones.
    func origins(publicURL: String) -> Set<String> {
        Set([Self.origin(of: publicURL)] + extraOrigins)
    }

    /// The scheme, host and port of `url`, as a browser writes an origin.
    public static func origin(of url: String) -> String {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(), let host = parts.host?.lowercased() else { return url }
        return "\(scheme)://\(host)" + (parts.port.map { ":\($0)" } ?? "")
    }

    /// A registrable domain name in lower case (no scheme, port or path): what a browser accepts as an RP ID.
    static func isRPID(_ value: String) -> Bool {
        guard (1...253).contains(value.utf8.count), value == value.lowercased() else { return false }
        let labels = value.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            (1...63).contains(label.count) && label.first != "-" && label.last != "-"
                && label.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
        }
    }

    /// Why `value` cannot be an allowed origin (what an origin must be), or nil: an https origin (http only on
    /// localhost), or an Android app's `android:apk-key-hash:` origin.
    static func originProblem(_ value: String) -> String? {
        if value.hasPrefix("android:apk-key-hash:") {
            let hash = value.dropFirst("android:apk-key-hash:".count)
            return (try? Base64URL.decode(hash))?.count == 32 ? nil : "android:apk-key-hash: then the base64url SHA-256 of the app's signing certificate"
        }
        guard let parts = URLComponents(string: value), let scheme = parts.scheme, let host = parts.host, !host.isEmpty,
            parts.path.isEmpty, parts.query == nil, parts.fragment == nil, parts.user == nil, origin(of: value) == value,
            scheme == "https" || (scheme == "http" && host == "localhost")
        else { return "an origin such as https://app.example.com (scheme, host and port in lower case, no path; http only for localhost), or android:apk-key-hash:<hash>" }
        return nil
    }

    /// Why browsers would refuse the RP ID in effect, or nil: an IP address is not a domain (WebAuthn §5.1.4.1 asks
    /// for a valid domain), and the RP ID must be the host of `publicURL` or a domain it ends with.
    public func rpIDProblem(publicURL: String) -> String? {
        let host = URLComponents(string: publicURL)?.host?.lowercased() ?? ""
        let rpID = effectiveRPID(publicURL: publicURL)
        if rpID.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) || $0 == "." }) || rpID.contains(":") {
            return "the RP ID \(rpID) is an IP address, which browsers refuse: give publicURL a host name (http://localhost:8080 on this machine) or set --webauthn-rp-id"
        }
        guard host == rpID || host.hasSuffix("." + rpID) else {
            return "the RP ID \(rpID) is neither publicURL's host (\(host)) nor a domain it ends with: browsers will refuse it"
        }
        return nil
    }

    /// Sets `key` from the CLI's text; the error names the setting and what it accepts.
    public mutating func apply(_ key: String, _ value: String) throws(PasskeySettingsError) {
        switch key {
        case "passkeys":
            guard let mode = Mode(rawValue: value) else { throw PasskeySettingsError(key: key, expected: "off, optional or preferred") }
            self.mode = mode
        case "webauthn-rp-id":
            guard Self.isRPID(value) else { throw PasskeySettingsError(key: key, expected: "a domain name in lower case, such as login.example.com") }
            rpID = value
        case "webauthn-origin":
            if let problem = Self.originProblem(value) { throw PasskeySettingsError(key: key, expected: problem) }
            guard extraOrigins.count < Self.maximumOrigins else { throw PasskeySettingsError(key: key, expected: "at most \(Self.maximumOrigins) origins") }
            if !extraOrigins.contains(value) { extraOrigins.append(value) }
        case "passkey-second-step":
            guard value == "on" || value == "off" else { throw PasskeySettingsError(key: key, expected: "on or off") }
            secondStep = value == "on"
        case "webauthn-user-verification":
            guard let choice = UserVerification(rawValue: value) else { throw PasskeySettingsError(key: key, expected: "required or preferred") }
            userVerification = choice
        case "webauthn-attestation":
            guard let choice = Attestation(rawValue: value) else { throw PasskeySettingsError(key: key, expected: "none or direct") }
            attestation = choice
        case "webauthn-attestation-roots":
            do {
                _ = try PinnedRoots(pem: value)
            } catch {
                throw PasskeySettingsError(key: key, expected: "PEM certificates (\(error.detail))")
            }
            attestationRootsPEM = value
        default:
            throw PasskeySettingsError(key: key, expected: "a passkey setting")
        }
    }

    /// The attestation policy the verifier applies.
    var attestationPolicy: WebAuthnAttestationPolicy {
        switch attestation {
        case .none: .none
        case .direct: .direct(packedRoots: attestationRootsPEM.flatMap { try? PinnedRoots(pem: $0) })
        }
    }
}

public struct PasskeySettingsError: Error, CustomStringConvertible, Equatable {
    public let key: String
    public let expected: String

    public var description: String { "--\(key): expected \(expected)" }
}

/// The passkey_settings table (migration 19): each realm's `PasskeySettings`.
public typealias PasskeySettingsStore = RealmSettingsTable<PasskeySettings>

extension RealmSettingsTable where Value == PasskeySettings {
    init(database: KeywardDatabase, clock: any KeywardClock) {
        self.init(database: database, clock: clock, table: "passkey_settings")
    }
}
