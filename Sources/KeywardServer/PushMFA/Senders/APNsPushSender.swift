// The "apns" push sender: login pushes through Apple Push Notification service with a .p8 key.
import AsyncHTTPClient
import Foundation
import KeywardJOSE
import Logging
import NIOSSL

/// `pushProviderType` "apns": Apple Push Notification service with a .p8 provider key, over HTTP/2 (which
/// AsyncHTTPClient negotiates through TLS ALPN; APNs accepts nothing else).
///
/// Client ownership: see `PushHTTPClient` (its own client when `settings.caFile` or `settings.proxy` is set; then
/// call `shutdown()` before the sender goes away).
public final class APNsPushSender: PushSender {
    public let providerType = "apns"

    private let settings: APNsSettings
    private let baseURL: String
    private let http: PushHTTPClient
    private let logger: Logger
    private let clock: CurrentDate
    private let providerTokens: APNsProviderTokenCache

    /// Reads the .p8 key (and `caFile`) now, so a bad configuration stops start-up.
    public init(
        settings: APNsSettings, httpClient: HTTPClient = .shared, logger: Logger,
        clock: @escaping CurrentDate = { Date() }
    ) throws(SettingError) {
        let url = try PushSettingURL.parse(
            setting: "push.apns.url", value: settings.url, schemes: ["https"], example: APNsSettings.production)
        for (setting, value) in [("push.apns.teamId", settings.teamId), ("push.apns.keyId", settings.keyId),
                                 ("push.apns.topic", settings.topic)]
        where value.trimmingCharacters(in: .whitespaces).isEmpty {
            throw SettingError(setting: setting, problem: "not set")
        }
        let keyPath = settings.keyFile
        let pem = String(decoding: try SettingFile.contents(setting: "push.apns.keyFile", path: keyPath), as: UTF8.self)
        let key = try SettingFile.signingKey(setting: "push.apns.keyFile", path: keyPath, pem: pem, expected: .p256)
        // Read the CA before creating any client: a throwing init must not leave a client nobody can shut down.
        let extraTrustRoots = try settings.caFile.map { path throws(SettingError) in try Self.certificates(caFile: path) }

        self.settings = settings
        self.baseURL = url.absoluteString.hasSuffix("/") ? String(url.absoluteString.dropLast()) : url.absoluteString
        self.logger = logger
        self.clock = clock
        self.providerTokens = APNsProviderTokenCache(key: key, teamId: settings.teamId, keyId: settings.keyId, clock: clock)
        self.http = PushHTTPClient(given: httpClient, extraTrustRoots: extraTrustRoots, proxy: settings.proxy)
    }

    /// Shuts down the client this sender built for `caFile` or a proxy; does nothing otherwise.
    public func shutdown() async {
        await http.shutdown(logger: logger, sender: "APNs")
    }

    public func send(_ message: PushMessage) async -> PushDeliveryOutcome {
        var metadata = message.logMetadata
        guard !message.pushProviderId.isEmpty else {
            logger.warning("APNs push skipped: the credential has no device token", metadata: metadata)
            return .skipped
        }

        let providerToken: String
        do {
            providerToken = try await providerTokens.token()
        } catch {
            metadata["error"] = .string(error.message)
            logger.error("APNs push failed: cannot sign the provider token", metadata: metadata)
            return .failed
        }

        let response: OutboundHTTPResponse
        do {
            response = try await OutboundHTTP.post(
                http.client,
                url: baseURL + APNsRequest.path(deviceToken: message.pushProviderId),
                headers: APNsRequest.headers(providerToken: providerToken, topic: settings.topic, message: message, now: clock()),
                body: APNsRequest.payload(message: message))
        } catch {
            metadata["error"] = .string(String(describing: error))
            logger.error("APNs push failed: APNs unreachable", metadata: metadata)
            return .failed
        }

        let reason = APNsErrorResponse.reason(body: response.body)
        if let apnsId = response.headers.first(name: "apns-id") {
            metadata["apnsId"] = .string(apnsId)
        }
        metadata["status"] = .stringConvertible(response.status)
        metadata["reason"] = .string(reason ?? response.bodyExcerpt())
        switch APNsErrorResponse.meaning(status: response.status, reason: reason) {
        case .delivered:
            return .delivered
        case .unregistered:
            logger.notice("APNs says the device token is no longer valid", metadata: metadata)
            return .unregistered
        case .providerTokenRejected:
            await providerTokens.invalidate(providerToken)
            logger.error("APNs refused the provider token; a new one will be minted", metadata: metadata)
            return .failed
        case .failed:
            logger.error("APNs push failed", metadata: metadata)
            return .failed
        }
    }

    private static func certificates(caFile: String) throws(SettingError) -> [NIOSSLCertificate] {
        let data = try SettingFile.contents(setting: "push.apns.caFile", path: caFile)
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMBytes(Array(data))
        } catch {
            throw SettingError(setting: "push.apns.caFile", file: caFile, problem: "holds no readable PEM certificate")
        }
        guard !certificates.isEmpty else {
            throw SettingError(setting: "push.apns.caFile", file: caFile, problem: "holds no readable PEM certificate")
        }
        return certificates
    }
}
