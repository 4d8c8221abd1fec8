/// `pushProviderType` "none": the app has push turned off and polls `/login/pending` instead.
public struct NonePushSender: PushSender {
    public let providerType = "none"

    public init() {}

    public func send(_ message: PushMessage) async -> PushDeliveryOutcome {
        .skipped
    }
}
