// Building the path, headers and payload of the APNs request for one login push.
import Foundation
import KeywardJOSE
import NIOHTTP1

/// Builds the HTTP/2 request APNs expects for one login push.
enum APNsRequest {
    static let title = "Push MFA"
    static let body = "Please confirm your login"
    /// Used when the confirm token carries no readable `exp`: the default login challenge lifetime.
    static let fallbackLifetime: TimeInterval = 240
    static let maximumCollapseIdBytes = 64

    static func path(deviceToken: String) -> String {
        // Device tokens are hex; encoding keeps anything else from reshaping the path.
        "/3/device/" + deviceToken.percentEncodedUnreserved
    }

    static func headers(providerToken: String, topic: String, message: PushMessage, now: Date) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(name: "authorization", value: "bearer \(providerToken)")
        headers.add(name: "apns-topic", value: topic)
        headers.add(name: "apns-push-type", value: "alert")
        headers.add(name: "apns-priority", value: "10")
        headers.add(name: "apns-expiration", value: String(expiration(confirmToken: message.confirmToken, now: now)))
        let collapseId = collapseId(challengeId: message.challengeId)
        if !collapseId.isEmpty {
            headers.add(name: "apns-collapse-id", value: collapseId)
        }
        headers.add(name: "content-type", value: "application/json")
        return headers
    }

    /// APNs stops retrying an undeliverable push once the challenge it announces has expired.
    static func expiration(confirmToken: String, now: Date) -> Int64 {
        if let exp = try? JWS.parse(confirmToken).claims().int("exp"), exp > 0 {
            return exp
        }
        return Int64(now.timeIntervalSince1970.rounded(.down) + fallbackLifetime)
    }

    /// Collapse ids are limited to 64 bytes: the longest prefix of whole characters that fits.
    static func collapseId(challengeId: String) -> String {
        var prefix = ""
        var bytes = 0
        for character in challengeId {
            let size = character.utf8.count
            guard bytes + size <= maximumCollapseIdBytes else { break }
            prefix.append(character)
            bytes += size
        }
        return prefix
    }

    static func payload(message: PushMessage) -> [UInt8] {
        OutboundHTTP.json(APNsPayload(
            aps: .init(alert: .init(title: message.title ?? title, body: message.body ?? body), sound: "default"),
            token: message.confirmToken))
    }
}

/// `{"aps":{"alert":{"title":…,"body":…},"sound":"default"},"token":<confirm token>}`
struct APNsPayload: Encodable {
    struct APS: Encodable {
        var alert: Alert
        var sound: String
    }

    struct Alert: Encodable {
        var title: String
        var body: String
    }

    var aps: APS
    var token: String
}
