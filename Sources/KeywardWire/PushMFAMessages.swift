/// JSON bodies of the push-MFA device API (wire-compatible with keycloak-push-mfa-extension 2.3).
/// Optional members are omitted when nil, as the original's mapper does.

/// `{"status": …}`: enrolled, approved, denied, locked_out, updated, unchanged, rotated.
public struct PushMFAStatusResponse: Codable, Sendable, Equatable {
    public var status: String

    public init(status: String) {
        self.status = status
    }
}

/// Every push-MFA refusal: `{"error": "<message>"}` (401s: `"HTTP 401 Unauthorized"`, detail in `WWW-Authenticate`).
public struct PushMFAErrorBody: Codable, Sendable, Equatable {
    public var error: String

    public init(error: String) {
        self.error = error
    }
}

/// GET `/login/pending`.
public struct PendingChallengesResponse: Codable, Sendable, Equatable {
    public var challenges: [PendingChallenge]

    public init(challenges: [PendingChallenge]) {
        self.challenges = challenges
    }
}

/// One login waiting for this device. Times are epoch **seconds**.
public struct PendingChallenge: Codable, Sendable, Equatable {
    public var userId: String
    public var username: String
    public var cid: String
    public var expiresAt: Int64
    public var createdAt: Int64
    public var clientId: String?
    public var clientName: String?
    public var userVerification: UserVerificationPrompt?

    public init(
        userId: String, username: String, cid: String, expiresAt: Int64, createdAt: Int64,
        clientId: String?, clientName: String?, userVerification: UserVerificationPrompt?
    ) {
        self.userId = userId
        self.username = username
        self.cid = cid
        self.expiresAt = expiresAt
        self.createdAt = createdAt
        self.clientId = clientId
        self.clientName = clientName
        self.userVerification = userVerification
    }
}

/// `{"type":"number-match","numbers":["5","34","56"]}` or `{"type":"pin","pinLength":4}`.
public struct UserVerificationPrompt: Codable, Sendable, Equatable {
    public var type: String
    public var numbers: [String]?
    public var pinLength: Int?

    public init(type: String, numbers: [String]?, pinLength: Int?) {
        self.type = type
        self.numbers = numbers
        self.pinLength = pinLength
    }
}

/// POST `/enroll/complete` and POST `/login/challenges/{cid}/respond`: `{"token": "<device-signed JWT>"}`.
public struct DeviceTokenRequest: Codable, Sendable, Equatable {
    public var token: String

    public init(token: String) {
        self.token = token
    }
}

/// PUT `/device/push-provider`. A nil or blank type keeps the stored one.
public struct PushProviderUpdateRequest: Codable, Sendable, Equatable {
    public var pushProviderId: String
    public var pushProviderType: String?

    public init(pushProviderId: String, pushProviderType: String?) {
        self.pushProviderId = pushProviderId
        self.pushProviderType = pushProviderType
    }
}
