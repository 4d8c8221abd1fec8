// What an APNs answer means: delivered, device token gone, provider token refused, or failed.
import KeywardJOSE

/// What an APNs answer means for us. Error bodies are `{"reason": "BadDeviceToken"}` (410 adds a timestamp).
enum APNsErrorResponse {
    enum Meaning: Equatable {
        case delivered
        case unregistered
        /// Our provider token was refused: mint a new one.
        case providerTokenRejected
        case failed
    }

    static func reason(body: [UInt8]) -> String? {
        (try? StrictJSON.parseObject(body))?.string("reason")
    }

    static func meaning(status: Int, reason: String?) -> Meaning {
        switch (status, reason) {
        case (200, _): .delivered
        // 410 is Unregistered or ExpiredToken: the device token is gone either way.
        case (410, _): .unregistered
        case (400, "BadDeviceToken"): .unregistered
        case (403, "ExpiredProviderToken"), (403, "InvalidProviderToken"): .providerTokenRejected
        default: .failed
        }
    }
}
