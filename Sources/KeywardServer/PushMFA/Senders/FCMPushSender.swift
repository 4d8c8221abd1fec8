// The "fcm" push sender: login pushes through Firebase Cloud Messaging's HTTP v1 API.
import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1

/// `pushProviderType` "fcm": Firebase Cloud Messaging HTTP v1, authorised by a service account.
///
/// Client ownership: see `PushHTTPClient` (its own client when `settings.proxy` is set; then call `shutdown()`
/// before the sender goes away).
public final class FCMPushSender: PushSender {
    public let providerType = "fcm"

    private let settings: FCMSettings
    private let http: PushHTTPClient
    private let logger: Logger
    private let accessTokens: GoogleAccessTokenSource

    /// Reads and checks the service account now, so a bad file stops start-up.
    public init(
        settings: FCMSettings, httpClient: HTTPClient = .shared, logger: Logger,
        clock: @escaping CurrentDate = { Date() }
    ) throws(SettingError) {
        _ = try PushSettingURL.parse(
            setting: "push.fcm.url", value: settings.url, schemes: ["https", "http"],
            example: "https://fcm.googleapis.com/v1/projects/<id>/messages:send")
        let account = try GoogleServiceAccount.load(path: settings.serviceAccountFile)
        self.settings = settings
        self.http = PushHTTPClient(given: httpClient, proxy: settings.proxy)
        self.logger = logger
        self.accessTokens = GoogleAccessTokenSource(account: account, scope: GoogleAccessTokenSource.firebaseMessaging, httpClient: http.client, clock: clock)
    }

    /// Shuts down the client this sender built for a proxy; does nothing otherwise.
    public func shutdown() async {
        await http.shutdown(logger: logger, sender: "FCM")
    }

    public func send(_ message: PushMessage) async -> PushDeliveryOutcome {
        var metadata = message.logMetadata
        guard !message.pushProviderId.isEmpty else {
            logger.warning("FCM push skipped: the credential has no registration token", metadata: metadata)
            return .skipped
        }

        let accessToken: String
        do {
            accessToken = try await accessTokens.token()
        } catch {
            metadata["error"] = .string(error.description)
            logger.error("FCM push failed: no access token", metadata: metadata)
            return .failed
        }

        var headers = HTTPHeaders()
        headers.add(name: "Authorization", value: "Bearer \(accessToken)")
        headers.add(name: "Content-Type", value: "application/json")
        let body = OutboundHTTP.json(FCMMessageBody(message: message, settings: settings))
        let response: OutboundHTTPResponse
        do {
            response = try await OutboundHTTP.post(http.client, url: settings.url, headers: headers, body: body)
        } catch {
            metadata["error"] = .string(String(describing: error))
            logger.error("FCM push failed: FCM unreachable", metadata: metadata)
            return .failed
        }
        if response.isSuccess {
            return .delivered
        }

        metadata["status"] = .stringConvertible(response.status)
        metadata["body"] = .string(response.bodyExcerpt())
        if response.status == 401 {
            // Revoked or expired early: the next push must not reuse it.
            await accessTokens.invalidate(accessToken)
        }
        if FCMErrorResponse.meansTokenUnregistered(status: response.status, body: response.body) {
            logger.notice("FCM says the registration token is not registered", metadata: metadata)
            return .unregistered
        }
        logger.error("FCM push failed", metadata: metadata)
        return .failed
    }
}

/// `{"message":{"token":…,"notification":{"title":…,"body":…},"data":{"token":<confirm token>}}}`
struct FCMMessageBody: Encodable {
    struct Message: Encodable {
        var token: String
        var notification: Notification
        var data: [String: String]
    }

    struct Notification: Encodable {
        var title: String
        var body: String
    }

    var message: Message

    init(message push: PushMessage, settings: FCMSettings) {
        message = Message(
            token: push.pushProviderId,
            notification: Notification(title: push.title ?? settings.title, body: push.body ?? settings.body),
            data: ["token": push.confirmToken])
    }
}
