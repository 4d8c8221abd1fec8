// One app installation's registered key, with its status and what its attestation showed.
import Foundation
import KeywardJOSE

/// One app installation's registered key.
public struct Device: Sendable, Equatable {
    public enum Status: String, Sendable, CaseIterable {
        /// Signed requests are accepted.
        case registered
        /// Stored under the app's policy for a missing or failed attestation; signed requests are refused until an
        /// operator decides.
        case pending
        /// Refused by an operator; kept so the key cannot register again under another id.
        case rejected
    }

    public var realm: String
    public var appId: String
    public var deviceId: String
    /// The installation's P-256 public key, as the 65-byte uncompressed X9.62 point.
    public var publicKey: [UInt8]
    /// RFC 7638 thumbprint of `publicKey`: one key registers once per app.
    public var keyThumbprint: String
    public var platform: DeviceApp.Platform
    public var status: Status
    /// What the platform attested, or why nothing was (JSON object, for operators and audits).
    public var attestation: String
    /// A verified attestation vouched for the key (false: none came, it failed or was unreadable, or the development
    /// bypass let it in). Limits on registrations count only the unattested.
    public var attested: Bool
    /// App Attest: the attested key's id and public key (a key of its own, not `publicKey`), and the highest
    /// assertion counter seen.
    public var appAttestKeyId: String?
    public var appAttestPublicKey: [UInt8]?
    public var assertionCounter: Int64?
    public var registeredAt: Date
    public var keyRotatedAt: Date?
    /// The person who last got tokens bound to the device's key (signed in on it), and when the device was last seen
    /// doing so.
    public var userId: String? = nil
    public var lastSeenAt: Date? = nil
    /// Removed by its person or an operator: refused everywhere, kept so that its key cannot register again.
    public var removedAt: Date? = nil

    /// Signed requests and tokens bound to its key are accepted.
    public var usable: Bool { status == .registered && removedAt == nil }

    /// What its attestation summary says, read once: its kind, the level it vouches for, and where the hardware keeps
    /// the key. Android Key Attestation in the TEE or StrongBox certified the key itself, unless the key was rotated
    /// since without one; any other verified attestation vouches for the app installation that holds the key.
    public var attestationFacts: (kind: String, level: DeviceAttestationLevel, keyStorage: String?) {
        let summary = (try? StrictJSON.parseObject(Array(attestation.utf8))) ?? [:]
        let kind = summary["type"]?.stringValue ?? "none"
        guard attested else { return (kind, .none, nil) }
        let securityLevel = summary["security_level"]?.stringValue
        guard kind == "android-key", ["TRUSTED_ENVIRONMENT", "STRONG_BOX"].contains(securityLevel ?? ""), summary["key_rotated_unattested"] == nil
        else { return (kind, .appAttested, nil) }
        return (kind, .hardwareKey, securityLevel == "STRONG_BOX" ? "StrongBox" : "TEE")
    }

    /// How far its attestation vouches for it (`attestationFacts`).
    public var attestationLevel: DeviceAttestationLevel { attestationFacts.level }
}
