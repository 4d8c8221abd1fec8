// An app whose installations register device keys, with its attestation requirements and policies.
import Foundation

/// An app whose installations register device keys in a realm, with what its platform's attestation must show
/// and what happens when an installation sends none or a bad one.
public struct DeviceApp: Sendable, Equatable {
    public enum Platform: String, Sendable, CaseIterable {
        case ios, android
    }

    /// The App Attest environment an iOS app's attestations must come from (aaguid `appattestdevelop` or
    /// `appattest`), and for every app whether development shortcuts (the dev bypass) may exist at all.
    public enum Environment: String, Sendable, CaseIterable {
        case development, production
    }

    /// What a registration without a usable attestation becomes.
    public enum AttestationPolicy: String, Sendable, CaseIterable {
        /// Refused: the installation gets an error and nothing is stored.
        case reject
        /// Stored with status `pending`: the device exists but signed requests are refused until an operator decides.
        case pending
        /// Stored with status `registered`, the attestation summary saying what was missing or wrong.
        case accept
    }

    public var realm: String
    public var appId: String
    public var platform: Platform
    public var environment: Environment
    /// iOS: the Apple team id and bundle id, whose "TEAMID.bundle.id" App Attest hashes into rpIdHash.
    public var teamId: String?
    public var bundleId: String?
    /// Android: package names and signing-certificate SHA-256 digests (lowercase hex) accepted.
    public var packages: [String]
    public var signingCertDigests: [String]
    public var missingAttestation: AttestationPolicy
    public var failedAttestation: AttestationPolicy
    /// Registrations marked as development traffic may skip attestation (QA builds, simulators). Only for apps in
    /// the development environment; the database refuses it for production apps too.
    public var devBypass: Bool
    /// Android: Play Integrity response keys from Play Console, sealed under the master key (`PlayIntegrityKeys`).
    public var sealedPlayIntegrityKeys: [UInt8]?
    /// Android: Play Integrity tokens are decoded by Google (`decodeIntegrityToken`, with the server's service
    /// account) instead of with the app's own keys; the only way for standard requests.
    public var playIntegrityGoogle: Bool = false
    public var createdAt: Date

    /// The context a sealed secret of this app is bound to: a sealed blob copied to another app does not open.
    var sealingContext: String { "device-app:\(realm):\(appId)" }

    /// "TEAMID.bundle.id", the App ID App Attest binds attestations to.
    public var appleAppId: String? {
        guard let teamId, let bundleId else { return nil }
        return teamId + "." + bundleId
    }
}
