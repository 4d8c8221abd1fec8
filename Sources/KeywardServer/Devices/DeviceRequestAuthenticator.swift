// Checking a signed device request: time window, device status, key or App Attest signature, single use.
import Crypto
import Foundation
import KeywardAttestation
import KeywardJOSE

/// Checks signed device requests (`SignedRequest`): the time window, the device and its status, the signature by
/// its key (or its App Attest key's assertion, counter advanced atomically), and single use of the signed message.
struct DeviceRequestAuthenticator: Sendable {
    let store: any DeviceStore
    let singleUse: any SingleUseStore
    let clock: any KeywardClock
    /// Where a refused assertion's detail goes (the audit log): the client is told the reason only, since the detail
    /// names the app's `TEAMID.bundle.id` and the stored counter (security review L2).
    let recordRefusal: @Sendable (_ device: Device, _ failure: AttestationFailure) async -> Void

    /// Accepted distance between a request's timestamp and the server's clock, either way.
    static let window: TimeInterval = 300

    /// `deviceKeyOnly`: the request concerns the device key itself (its rotation), so even a device registered with
    /// App Attest signs it with that key.
    func authenticate(_ request: SignedRequest, realm: String, deviceKeyOnly: Bool = false) async throws(DeviceError) -> Device {
        let now = clock.now()
        let serverTime = Int64(now.timeIntervalSince1970.rounded(.down))
        // Whole seconds on both sides, as the header carries them.
        guard abs(request.timestamp - serverTime) <= Int64(Self.window) else {
            throw DeviceError(
                .unauthorized, .clockSkew, "the request's timestamp is more than \(Int(Self.window)) s from the server's time",
                serverTimestamp: serverTime
            )
        }
        let found: Device?
        do {
            found = try await store.device(realm: realm, appId: request.appId, deviceId: request.deviceId)
        } catch {
            throw .unavailable
        }
        guard let device = found else {
            throw DeviceError(.unauthorized, .notRegistered, "no device '\(displayable(request.deviceId))' is registered for app '\(displayable(request.appId))'")
        }
        switch request.version {
        case .deviceKey:
            // App Attest vouches for the app with each assertion; a device key alone, for a device registered with
            // it, would let code outside the genuine app sign once it had the key.
            guard device.appAttestKeyId == nil || deviceKeyOnly else {
                throw DeviceError(
                    .unauthorized, .invalidSignature,
                    "this device was registered with App Attest: sign with an assertion (\(SignedRequest.Header.version): appattest-1)"
                )
            }
            try Self.verifyDeviceKeySignature(request, device: device)
        case .appAttestAssertion:
            guard !deviceKeyOnly else {
                throw DeviceError(.unauthorized, .invalidSignature, "rotating the device key is signed with that key (\(SignedRequest.Header.version): 1)")
            }
            try await verifyAssertion(request, device: device)
        }
        guard device.removedAt == nil else { throw DeviceError(.forbidden, .deviceRevoked, "the device was removed") }
        switch device.status {
        case .registered: break
        case .pending: throw DeviceError(.forbidden, .devicePending, "the device's registration waits for an operator's decision")
        case .rejected: throw DeviceError(.forbidden, .deviceRevoked, "the device was refused by an operator")
        }
        // Keyed by the signed message itself (nonce included): a replay, even with a re-encoded signature, is the
        // same message.
        let fresh: Bool
        do {
            fresh = try await singleUse.recordOnce(
                scope: "device-request:\(realm):\(device.appId):\(device.deviceId)", key: Base64URL.encode(SHA256.hash(data: request.message)),
                expiresAt: Date(timeIntervalSince1970: TimeInterval(request.timestamp) + Self.window + 60), now: now
            )
        } catch {
            throw .unavailable
        }
        guard fresh else { throw DeviceError(.unauthorized, .nonceReplay, "this signed request was received before") }
        return device
    }

    private static func verifyDeviceKeySignature(_ request: SignedRequest, device: Device) throws(DeviceError) {
        guard let key = try? P256.Signing.PublicKey(x963Representation: device.publicKey) else { throw .unavailable }
        guard let signature = DeviceSignature.ecdsa(request.signature), key.isValidSignature(signature, for: request.message) else {
            throw DeviceError(.unauthorized, .invalidSignature, "the signature is not the device key's over this request")
        }
    }

    /// An App Attest assertion over the message (its client data), by the key attested at registration. Only this
    /// path needs the app (its App ID), so requests signed with the device key read no app row.
    private func verifyAssertion(_ request: SignedRequest, device: Device) async throws(DeviceError) {
        let app: DeviceApp?
        do {
            app = try await store.app(realm: device.realm, appId: device.appId)
        } catch {
            throw .unavailable
        }
        guard let attested = device.appAttestPublicKey, let counter = device.assertionCounter,
            let key = try? P256.Signing.PublicKey(x963Representation: attested), let appleAppId = app?.appleAppId
        else {
            throw DeviceError(.unauthorized, .invalidSignature, "the device was not registered with App Attest; sign with its key (version 1)")
        }
        let verifier = AppAttestVerifier(appID: appleAppId, environment: app?.environment == .production ? .production : .development)
        let assertion: AppAttestAssertion
        do throws(AttestationFailure) {
            assertion = try verifier.verifyAssertion(
                request.signature, clientData: .data(request.message), publicKey: key, previousCounter: UInt32(clamping: counter)
            )
        } catch {
            await recordRefusal(device, error)
            throw DeviceError(.unauthorized, .invalidSignature, "the App Attest assertion was refused (\(error.reason.rawValue))", reason: error.reason.rawValue)
        }
        let advanced: Bool
        do {
            advanced = try await store.advanceAssertionCounter(realm: device.realm, appId: device.appId, deviceId: device.deviceId, to: Int64(assertion.counter))
        } catch {
            throw .unavailable
        }
        guard advanced else {
            throw DeviceError(
                .unauthorized, .invalidSignature, "the assertion's counter does not exceed the stored one (a replay or a concurrent assertion)",
                reason: AttestationReason.counterNotIncreasing.rawValue
            )
        }
    }
}
