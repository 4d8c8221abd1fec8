// What a device does to itself: the panic button (lockout), a new push token, key rotation with optional proof of possession.
import Foundation
import KeywardJOSE

extension PushMFAService {
    /// Endpoint 5, the device's panic button: disables the user and ends all their pending challenges
    /// (docs/PUSH-MFA-PROTOCOL.md §3.7). Disabling comes first, so a failure halfway leaves the account safe.
    func lockout(device: DeviceAuthenticator.Device) async throws(PushMFAError) {
        let realm = device.credential.realm
        try await stored { try await users.setEnabled(false, realm: realm, id: device.user.id) }
        let ended = try await stored { try await challenges.resolveAllPending(realm: realm, userId: device.user.id, to: .userLockedOut, now: clock.now()) }
        for challenge in ended { signals.notify(challenge.id) }
        await audit.record(
            .userLockedOut, realm: realm, userId: device.user.id,
            details: ["credentialId": device.credential.credentialId, "endedChallenges": String(ended.count)]
        )
    }

    /// Endpoint 6 (docs/PUSH-MFA-PROTOCOL.md §3.8): authentication runs before the body is read.
    func updatePushProvider(body: JSONObject?, device: DeviceAuthenticator.Device) async throws(PushMFAError) -> String {
        guard let body else { throw PushMFAError.badRequest("Request body required") }
        let providerId = try PushMFAInput.required(body, "pushProviderId", maxLength: PushMFALimits.pushProviderIdLength)
        let providerType = try PushMFAInput.optional(body, "pushProviderType", maxLength: PushMFALimits.pushProviderTypeLength)
            ?? device.credential.pushProviderType
        if providerId == device.credential.pushProviderId && providerType == device.credential.pushProviderType {
            return "unchanged"
        }
        try await stored {
            try await credentials.updatePushProvider(realm: device.credential.realm, id: device.credential.id, providerId: providerId, providerType: providerType)
        }
        return "updated"
    }

    /// Endpoint 7 (docs/PUSH-MFA-PROTOCOL.md §3.9): authenticated with the **old** key. Keyward closes the original's gap when
    /// the client sends `proofOfPossession`, a JWS signed by the new key naming the user, device and old key.
    func rotateKey(body: JSONObject?, device: DeviceAuthenticator.Device) async throws(PushMFAError) {
        do throws(PushMFAError) {
            // Made on a registered device, the credential is that device's key: a key this route set would be one
            // nothing attested, and the device's own checks would disown the credential.
            guard device.credential.registeredDeviceId == nil else {
                throw PushMFAError.badRequest(
                    "This device approves with its registered device key; rotate it with POST /realms/\(device.credential.realm)/v1/device/rotate-key"
                )
            }
            guard let body else { throw PushMFAError.badRequest("Request body required") }
            let newKey = try DeviceKeyInput.rotationKey(body["publicKeyJwk"])
            if let proof = body["proofOfPossession"] {
                try RotationProof.verify(proof, newKey: newKey, device: device, now: clock.now())
            } else if try await self.stored({ try await self.settings(realm: device.credential.realm) }).requireRotationProof {
                throw PushMFAError.missingField("proofOfPossession")
            }
            let stored = String(decoding: StrictJSON.serialize(newKey.jsonObject), as: UTF8.self)
            try await self.stored { try await credentials.replaceKey(realm: device.credential.realm, id: device.credential.id, publicKeyJWK: stored, createdAt: clock.now()) }
            await audit.record(
                .keyRotated, realm: device.credential.realm, userId: device.user.id,
                details: ["credentialId": device.credential.credentialId, "jkt": newKey.thumbprint(), "possessionProven": body["proofOfPossession"] == nil ? "false" : "true"]
            )
        } catch {
            if error.status == 400 || error.status == 403 {
                await audit.record(.keyRotationDenied, realm: device.credential.realm, userId: device.user.id, details: ["credentialId": device.credential.credentialId, "reason": error.message])
            }
            throw error
        }
    }
}

/// Proof of possession of the new key on rotation (Keyward extension, optional for compatible clients):
/// header `typ: keyward-rotation+jwt`; claims `sub`, `deviceId`, `previousJkt` (RFC 7638 thumbprint of the
/// current key), `iat` within ±120 s; signed by the new key.
enum RotationProof {
    static let type = "keyward-rotation+jwt"

    static func verify(_ value: JSONValue, newKey: JWK, device: DeviceAuthenticator.Device, now: Date) throws(PushMFAError) {
        guard let compact = value.stringValue else { throw PushMFAError.badRequest("Invalid proofOfPossession") }
        let verified: VerifiedJWT
        do {
            verified = try JWTVerifier.verify(compact, policy: JWTVerificationPolicy(
                allowedAlgorithms: DeviceAuthenticator.algorithms, keys: .single(newKey), expectedType: type,
                requiredClaims: ["iat"], leeway: 120, maxSize: PushMFALimits.jwtLength
            ), now: now)
        } catch {
            throw PushMFAError.badRequest("Invalid proofOfPossession: \(error.message)")
        }
        let claims = verified.claims
        guard let iat = claims["iat"]?.numberValue, abs(now.timeIntervalSince1970 - iat) <= 120 else {
            throw PushMFAError.badRequest("Invalid proofOfPossession: iat is outside ±120 s")
        }
        guard claims["sub"]?.stringValue == device.user.id, claims["deviceId"]?.stringValue == device.credential.deviceId,
            claims["previousJkt"]?.stringValue == device.key.thumbprint()
        else {
            throw PushMFAError.forbidden("proofOfPossession does not match this device")
        }
    }
}
