// The settings of the FCM push sender: send URL, service account, notification text and proxy.
import AsyncHTTPClient
/// Firebase Cloud Messaging over the HTTP v1 API.
public struct FCMSettings: Sendable, Equatable {
    /// `https://fcm.googleapis.com/v1/projects/<id>/messages:send`
    public var url: String
    /// The Google service-account JSON (`client_email`, `private_key`, `token_uri`, optional `private_key_id`).
    public var serviceAccountFile: String
    public var title: String
    public var body: String
    /// The HTTP proxy for both the token exchange and the sends (from the environment, `OutboundProxy`).
    public var proxy: HTTPClient.Configuration.Proxy?

    public init(url: String, serviceAccountFile: String, title: String = "Push MFA", body: String = "Please confirm your login") {
        self.url = url
        self.serviceAccountFile = serviceAccountFile
        self.title = title
        self.body = body
    }
}
