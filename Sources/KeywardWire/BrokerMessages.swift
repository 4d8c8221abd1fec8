// The broker's wire messages, shared by the server and KeywardKit's BrokerClient.

/// The answer to `POST …/v1/broker/handoff/take`: what was handed off, once. `kind` is `delegation` (a realm-signed
/// JWT for the session key, from the relay) or `blob` (a relay client's own format); `clientId` is the client it was
/// left for: the relay's app, or the relay client that stored the blob.
public struct HandoffTakeResponse: Codable, Sendable, Equatable {
    public var kind: String
    public var value: String
    public var clientId: String

    public init(kind: String, value: String, clientId: String) {
        self.kind = kind
        self.value = value
        self.clientId = clientId
    }

    enum CodingKeys: String, CodingKey {
        case kind, value
        case clientId = "client_id"
    }
}

/// The answer to `POST …/v1/broker/handoff`: the code the server chose (128 random bits), for the relay to put in
/// the return URL's fragment, and how long the hand-off waits.
public struct HandoffPutResponse: Codable, Sendable, Equatable {
    public var code: String
    public var expiresIn: Int

    public init(code: String, expiresIn: Int) {
        self.code = code
        self.expiresIn = expiresIn
    }

    enum CodingKeys: String, CodingKey {
        case code
        case expiresIn = "expires_in"
    }
}
