// The device registration API (`/realms/{realm}/v1/device/…`), shared by the server and KeywardKit.

/// `POST /v1/device/challenge` body.
public struct DeviceChallengeRequest: Codable, Sendable, Equatable {
    public var appId: String

    public init(appId: String) {
        self.appId = appId
    }

    enum CodingKeys: String, CodingKey {
        case appId = "app_id"
    }
}

/// A single-use challenge for a registration or a key rotation.
public struct DeviceChallengeResponse: Codable, Sendable, Equatable {
    public var challenge: String
    /// RFC 3339, UTC.
    public var expiresAt: String
    public var ttlSeconds: Int

    public init(challenge: String, expiresAt: String, ttlSeconds: Int) {
        self.challenge = challenge
        self.expiresAt = expiresAt
        self.ttlSeconds = ttlSeconds
    }

    enum CodingKeys: String, CodingKey {
        case challenge
        case expiresAt = "expires_at"
        case ttlSeconds = "ttl_seconds"
    }
}

/// The answer to a registration: 201 for a new device, 200 with `code` `ALREADY_REGISTERED` for a key registered
/// before.
public struct DeviceRegistrationResponse: Codable, Sendable, Equatable {
    public var deviceId: String
    /// `registered`, `pending` or `rejected`.
    public var status: String
    /// RFC 3339, UTC.
    public var registeredAt: String
    public var code: ErrorCode?

    public init(deviceId: String, status: String, registeredAt: String, code: ErrorCode? = nil) {
        self.deviceId = deviceId
        self.status = status
        self.registeredAt = registeredAt
        self.code = code
    }

    enum CodingKeys: String, CodingKey {
        case deviceId = "device_id"
        case status
        case registeredAt = "registered_at"
        case code
    }
}

/// `GET /v1/device/status` (a signed request): the signing device's record.
public struct DeviceStatusResponse: Codable, Sendable, Equatable {
    public var appId: String
    public var deviceId: String
    public var platform: String
    public var status: String
    /// RFC 3339, UTC.
    public var registeredAt: String
    /// RFC 3339, UTC; absent until the key is first rotated.
    public var keyRotatedAt: String?

    public init(appId: String, deviceId: String, platform: String, status: String, registeredAt: String, keyRotatedAt: String?) {
        self.appId = appId
        self.deviceId = deviceId
        self.platform = platform
        self.status = status
        self.registeredAt = registeredAt
        self.keyRotatedAt = keyRotatedAt
    }

    enum CodingKeys: String, CodingKey {
        case appId = "app_id"
        case deviceId = "device_id"
        case platform, status
        case registeredAt = "registered_at"
        case keyRotatedAt = "key_rotated_at"
    }
}
