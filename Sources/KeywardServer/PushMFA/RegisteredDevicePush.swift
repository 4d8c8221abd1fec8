// Push approvals enabled on a registered device's own key, without a QR code (issue 32):
// `POST /realms/{realm}/v1/device/push-mfa`, with the person's DPoP-bound access token and a proof by the device key.
import Foundation
import Hummingbird
import KeywardJOSE
import KeywardWire

/// What the device asks for: where its push messages go, and how the account page names it.
struct RegisteredDevicePushRequest: Sendable {
    var pushProviderType = "none"
    var pushProviderId = ""
    var deviceLabel: String?
    var credentialId: String?

    /// `push_provider_type` (default `none`), `push_provider_id` (required unless `none`), `device_label`,
    /// `credential_id` (the device's own name for the credential; default: the registered device id).
    init(_ body: JSONObject) throws(APIError) {
        func text(_ name: String, _ maxLength: Int) throws(APIError) -> String? {
            guard let value = body[name] else { return nil }
            guard let text = value.stringValue, !text.isEmpty, text.utf8.count <= maxLength else {
                throw APIError(.badRequest, .invalidRequest, "\(name) must be a string of 1 to \(maxLength) bytes")
            }
            return text
        }
        let known: Set<String> = ["push_provider_type", "push_provider_id", "device_label", "credential_id"]
        if let unknown = body.keys.sorted().first(where: { !known.contains($0) }) {
            throw APIError(.badRequest, .invalidRequest, "unknown member '\(unknown.prefix(64))'; expected: \(known.sorted().joined(separator: ", "))")
        }
        pushProviderType = try text("push_provider_type", PushMFALimits.pushProviderTypeLength) ?? "none"
        pushProviderId = try text("push_provider_id", PushMFALimits.pushProviderIdLength) ?? ""
        guard !pushProviderId.isEmpty || pushProviderType == "none" else {
            throw APIError(.badRequest, .invalidRequest, "push_provider_id is required unless push_provider_type is none")
        }
        deviceLabel = try text("device_label", PushMFALimits.deviceLabelLength)
        credentialId = try text("credential_id", PushMFALimits.credentialIdLength)
    }
}

extension PushMFAService {
    /// Push approvals on `device`, for `user`, with the device's own key `key` (the proof's): one credential per
    /// device, as an enrollment by QR code keeps, within the realm's cap on devices per person.
    func enablePush(realm: String, user: User, device: RegisteredDeviceKey, key: JWK, request: RegisteredDevicePushRequest) async throws -> PushCredential {
        let settings = try await settings(realm: realm)
        var jwk = key.jsonObject
        jwk["alg"] = .string(JWSAlgorithm.es256.rawValue)
        let credential = PushCredential(
            id: SecureRandom.uuidString(), realm: realm, userId: user.id, credentialId: request.credentialId ?? device.deviceId, deviceId: device.deviceId,
            deviceType: device.platform, deviceLabel: request.deviceLabel ?? Self.label(device), publicKeyJWK: String(decoding: StrictJSON.serialize(jwk), as: UTF8.self),
            pushProviderId: request.pushProviderId, pushProviderType: request.pushProviderType, createdAt: clock.now(),
            registeredAppId: device.appId, registeredDeviceId: device.deviceId
        )
        let stored: Bool
        do {
            stored = try await credentials.putRegisteredDeviceCredential(credential, maxDevices: settings.maxDevicesPerUser)
        } catch StoreError.conflict {
            throw APIError(.conflict, .registrationInProgress, "push approvals were being turned on for this device at the same time; try again", reason: "concurrent_enable")
        }
        guard stored else {
            throw APIError(.conflict, .tooManyDevices, "at most \(settings.maxDevicesPerUser) devices approve logins per person; remove one first")
        }
        await audit.record(.enrollmentCompleted, realm: realm, userId: user.id, details: [
            "method": "registered-device", "credentialId": credential.credentialId, "deviceId": device.deviceId, "app": device.appId,
            "deviceType": device.platform, "attestation": device.attestation, "level": device.level.rawValue,
        ])
        return credential
    }

    private static func label(_ device: RegisteredDeviceKey) -> String {
        device.platform == "ios" ? "iPhone" : "Android phone"
    }
}

/// The route: the DPoP gate in front proves the token and the key; here, that the token is a person's and was
/// issued to this very registered device, which must still be usable.
struct RegisteredDevicePushRoutes: Sendable {
    /// How recent the sign-in behind the token must be (as the account page's changes ask).
    static let recentSignIn = BrowserSession.recentSignIn
    /// The `acr` of a token whose sign-in ran a second factor (the value the token endpoint writes).
    static let multiFactor = "urn:keyward:acr:mfa"

    let service: PushMFAService
    let users: UserService
    let deviceKeys: DeviceKeys
    let realmResolution: RealmResolution
    let authentication: DPoPAuthentication
    let maxBodySize: Int

    func register(on router: Router<KeywardRequestContext>) {
        router.group("/realms/:realm/v1/device/push-mfa").add(middleware: realmResolution).add(middleware: authentication).post { request, context in
            try await enable(request, context)
        }
    }

    private func enable(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        let caller = try context.caller(DPoPResourceGuard.Caller.self)
        guard let proof = caller.proof else {
            throw APIError(.unauthorized, .invalidToken, "a DPoP-bound access token and a proof by the device key are required", reason: "dpop_required")
        }
        guard let user = try await users.user(realm: realm, id: caller.subject), user.enabled else {
            throw APIError(.forbidden, .invalidToken, "the access token is not an enabled person's of realm '\(realm)'", reason: "not_a_person")
        }
        guard let device = try await deviceKeys.device(realm: realm, jkt: proof.thumbprint) else {
            throw APIError(.forbidden, .notRegistered, "the DPoP key is not a registered device's key in realm '\(realm)'; register the device first")
        }
        guard device.usable else {
            throw APIError(.forbidden, .deviceRevoked, "device '\(device.deviceId)' of app '\(device.appId)' was removed or is not registered")
        }
        guard caller.claims["device_id"]?.stringValue == device.deviceId, caller.claims["device_app"]?.stringValue == device.appId else {
            throw APIError(
                .forbidden, .invalidToken, "the access token was not issued to this registered device; sign in on it with its key as the DPoP key",
                reason: "token_not_for_device"
            )
        }
        // Adding a way to approve logins asks what the account page's enrollment asks: a recent sign-in, and the
        // second factor when the person has one already.
        let now = service.clock.now()
        guard let authTime = caller.claims["auth_time"]?.numberValue, now.timeIntervalSince1970 - authTime <= Self.recentSignIn else {
            throw APIError(
                .forbidden, .invalidToken, "push approvals are turned on only within \(Int(Self.recentSignIn / 60)) minutes of signing in on the device; sign in again",
                reason: "sign_in_not_recent"
            )
        }
        let others = try await service.credentials.credentials(realm: realm, userId: user.id).filter { $0.deviceId != device.deviceId }
        if !others.isEmpty, caller.claims["acr"]?.stringValue != Self.multiFactor {
            throw APIError(
                .forbidden, .invalidToken, "the person approves logins on another device already: sign in with it (the second factor) on this one first",
                reason: "second_factor_required"
            )
        }
        let body = try await JSONRequestBody.object(request, maxSize: maxBodySize)
        let credential = try await service.enablePush(
            realm: realm, user: user, device: device, key: proof.jwk, request: try RegisteredDevicePushRequest(body)
        )
        let answer: JSONObject = [
            "credential_id": .string(credential.credentialId), "device_id": .string(device.deviceId), "user_id": .string(user.id),
            "push_provider_type": .string(credential.pushProviderType), "attestation": .string(device.attestation), "level": .string(device.level.rawValue),
        ]
        return JSONResponse.make(bytes: StrictJSON.serialize(.object(answer)), status: .created, headers: [.cacheControl: "no-store"])
    }
}
