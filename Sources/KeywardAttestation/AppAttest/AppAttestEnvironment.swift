/// Which App Attest service attested a key: the sandbox one (apps run from Xcode, or signed with the
/// `development` App Attest entitlement) or the production one (TestFlight and App Store builds with `production`).
/// An app's policy names exactly one: accepting both would let a development build stand in for the real app.
public enum AppAttestEnvironment: String, Sendable, Codable, CaseIterable {
    case development
    case production

    /// The 16-byte aaguid of the attestation's authData: "appattestdevelop", or "appattest" and seven zero bytes.
    public var aaguid: [UInt8] {
        switch self {
        case .development: Array("appattestdevelop".utf8)
        case .production: Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
        }
    }
}
