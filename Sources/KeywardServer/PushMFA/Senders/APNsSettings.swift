// The settings of the APNs push sender: endpoint, team, key, topic, extra CA and proxy.
import AsyncHTTPClient
/// Apple Push Notification service, token-based (.p8) authentication over HTTP/2.
public struct APNsSettings: Sendable, Equatable {
    public static let production = "https://api.push.apple.com"
    public static let development = "https://api.sandbox.push.apple.com"

    public var url: String
    public var teamId: String
    public var keyId: String
    /// The .p8 key from the Apple developer account: PEM, PKCS#8, P-256.
    public var keyFile: String
    /// The app's bundle id.
    public var topic: String
    /// An extra trust anchor (PEM), for a private test double or a TLS-intercepting proxy.
    public var caFile: String?
    /// The HTTP proxy to APNs (from the environment, `OutboundProxy`).
    public var proxy: HTTPClient.Configuration.Proxy?

    public init(
        url: String = APNsSettings.production, teamId: String, keyId: String, keyFile: String, topic: String,
        caFile: String? = nil
    ) {
        self.url = url
        self.teamId = teamId
        self.keyId = keyId
        self.keyFile = keyFile
        self.topic = topic
        self.caFile = caFile
    }
}
