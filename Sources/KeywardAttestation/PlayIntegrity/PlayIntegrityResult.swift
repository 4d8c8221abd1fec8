// A verified Play Integrity verdict with its checks, as the server records it and the CLI prints it.
import Foundation

/// A verified Play Integrity verdict, for the server (what to record on the device) and for
/// `keyward attestation verify` (printed as JSON: the verdict's fields, the request time in ISO 8601 as well, who
/// decoded the token, and every check with its outcome).
///
/// Play Integrity vouches for an app and a device, never for a key: unlike Android Key Attestation it cannot tell
/// which key the installation registers beyond what its nonce binds.
public struct PlayIntegrityResult: Sendable, Encodable {
    public let verdict: PlayIntegrityVerdict
    public let source: PlayIntegritySource
    public let verifiedAt: Date
    /// The checks that ran, in order, each passed or not checked.
    public let checks: [AttestationCheck]

    /// When the app asked for the token.
    public var requestedAt: Date { Date(timeIntervalSince1970: Double(verdict.timestampMillis) / 1000) }

    enum CodingKeys: String, CodingKey {
        case requestPackageName, nonce, requestHash, timestampMillis, requestedAt, appRecognitionVerdict, packageName
        case certificateSha256Digests, versionCode, deviceRecognitionVerdicts, deviceActivityLevel, sdkVersion
        case appLicensingVerdict, playProtectVerdict, appsDetected, decodedBy, verifiedAt, checks
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(verdict.requestPackageName, forKey: .requestPackageName)
        try container.encodeIfPresent(verdict.nonce, forKey: .nonce)
        try container.encodeIfPresent(verdict.requestHash, forKey: .requestHash)
        try container.encode(verdict.timestampMillis, forKey: .timestampMillis)
        try container.encode(requestedAt.formatted(.iso8601), forKey: .requestedAt)
        try container.encode(verdict.appRecognitionVerdict, forKey: .appRecognitionVerdict)
        try container.encodeIfPresent(verdict.packageName, forKey: .packageName)
        try container.encode(verdict.certificateSha256Digests, forKey: .certificateSha256Digests)
        try container.encodeIfPresent(verdict.versionCode, forKey: .versionCode)
        try container.encode(verdict.deviceRecognitionVerdicts, forKey: .deviceRecognitionVerdicts)
        try container.encodeIfPresent(verdict.deviceActivityLevel, forKey: .deviceActivityLevel)
        try container.encodeIfPresent(verdict.sdkVersion, forKey: .sdkVersion)
        try container.encodeIfPresent(verdict.appLicensingVerdict, forKey: .appLicensingVerdict)
        try container.encodeIfPresent(verdict.playProtectVerdict, forKey: .playProtectVerdict)
        try container.encodeIfPresent(verdict.appsDetected, forKey: .appsDetected)
        try container.encode(source, forKey: .decodedBy)
        try container.encode(verifiedAt.formatted(.iso8601), forKey: .verifiedAt)
        try container.encode(checks, forKey: .checks)
    }
}
