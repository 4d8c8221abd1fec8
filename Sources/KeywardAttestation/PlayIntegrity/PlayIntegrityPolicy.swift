// What an app accepts from a Play Integrity verdict, and the checks that policy runs.
import Foundation

/// What an app accepts from a Play Integrity verdict. The defaults are a production registration's: the token
/// asked for by one of the app's packages with this registration's nonce within the last five minutes, the app
/// recognized by Play, and a device that meets device integrity.
public struct PlayIntegrityPolicy: Sendable {
    /// The device integrity an app asks for. Play lists every level a device meets, so a stronger level carries
    /// the weaker ones with it on real devices; the check does not rely on that.
    public enum DeviceIntegrityRequirement: String, Sendable, Encodable, CaseIterable {
        /// MEETS_STRONG_INTEGRITY: hardware-backed boot integrity and a recent security update.
        case strong = "STRONG"
        /// MEETS_DEVICE_INTEGRITY or MEETS_STRONG_INTEGRITY: a genuine, certified Android device. The default.
        case device = "DEVICE"
        /// Any level, MEETS_BASIC_INTEGRITY and MEETS_VIRTUAL_INTEGRITY (an emulator by Google) included: for
        /// development apps only; a device meeting none is still refused.
        case relaxed = "RELAXED"

        /// The verdicts that satisfy this requirement.
        public var acceptedVerdicts: Set<String> {
            switch self {
            case .strong: ["MEETS_STRONG_INTEGRITY"]
            case .device: ["MEETS_STRONG_INTEGRITY", "MEETS_DEVICE_INTEGRITY"]
            case .relaxed: ["MEETS_STRONG_INTEGRITY", "MEETS_DEVICE_INTEGRITY", "MEETS_BASIC_INTEGRITY", "MEETS_VIRTUAL_INTEGRITY"]
            }
        }
    }

    /// The app's package names. The request's package and the evaluated app's package must each be one of them;
    /// with none, every verdict is refused.
    public var packageNames: [String]
    /// The nonce the app passed to Play (a classic request) or its request hash (a standard request): the
    /// registration's binding nonce. Compared as bytes when both sides are base64, whatever the alphabet and padding.
    public var expectedNonce: String
    /// SHA-256 digests of the app's signing certificates; one of the evaluated app's digests must be among them.
    /// Empty: not checked (reported so).
    public var allowedCertificateDigests: Set<[UInt8]>
    /// How old the request may be at the verification time. Default 300 s.
    public var maxAge: TimeInterval
    /// How far ahead of the verification time the request may be dated (clock skew between Google and us).
    /// Default 60 s.
    public var maxFutureSkew: TimeInterval
    /// Default `.device`.
    public var deviceIntegrity: DeviceIntegrityRequirement

    public init(
        packageNames: [String],
        expectedNonce: String,
        allowedCertificateDigests: Set<[UInt8]> = [],
        maxAge: TimeInterval = 300,
        maxFutureSkew: TimeInterval = 60,
        deviceIntegrity: DeviceIntegrityRequirement = .device
    ) {
        self.packageNames = packageNames
        self.expectedNonce = expectedNonce
        self.allowedCertificateDigests = allowedCertificateDigests
        self.maxAge = maxAge
        self.maxFutureSkew = maxFutureSkew
        self.deviceIntegrity = deviceIntegrity
    }

    /// The checks, in the order they run.
    var rules: [any PlayIntegrityRule] {
        [
            PlayRequestPackageRule(packageNames: packageNames),
            PlayNonceRule(expected: expectedNonce),
            PlayFreshnessRule(maxAge: maxAge, maxFutureSkew: maxFutureSkew),
            PlayAppRecognitionRule(),
            PlayAppIdentityRule(packageNames: packageNames, certificateDigests: allowedCertificateDigests),
            PlayDeviceIntegrityRule(requirement: deviceIntegrity),
        ]
    }
}
