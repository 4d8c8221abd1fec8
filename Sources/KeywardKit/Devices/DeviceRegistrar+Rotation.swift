// Rotating a registered device's key, and settling a rotation whose outcome was never heard.
import Foundation
import KeywardJOSE
import KeywardWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DeviceRegistrar {
    /// Replaces the device key of `appId` and returns the saved state.
    ///
    /// The new key is made under a staging name (``DeviceRegistrationState/pendingKeyName``) before the server hears
    /// of it; `POST /v1/device/rotate-key` carries a fresh challenge, the new key and its signature over the
    /// challenge, and is signed by the current key. Only after the server's 200 does the new key take the current
    /// key's name (the old key is gone then). A refusal (4xx) keeps the old key and deletes the new one. When the
    /// outcome is unknown — no answer, or a 5xx — the registrar asks the server which key it holds (a signed status
    /// call with each) before anything else, then retries like a registration. If even that cannot be asked, the
    /// state stays `registering` with both keys, and the next call on this app id settles it the same way.
    public func rotateKey(appId: String) async throws -> DeviceRegistrationState {
        try DeviceAppId.check(appId)
        guard registrations[appId] == nil, !rotations.contains(appId) else { throw KeywardKitError.registrationInProgress(appId: appId) }
        rotations.insert(appId)
        defer { rotations.remove(appId) }
        var state = try await registeredState(appId: appId, settling: true)
        let current = try deviceKey(&state)
        let nextName = state.keyName + "-next"
        try save(&state, moving: .registering) { $0.pendingKeyName = nextName }
        let next: DeviceKey
        do {
            next = try DeviceKey(name: nextName, signer: try keyStore.createKey(named: nextName, algorithm: .es256))
        } catch {
            try? keepCurrentKey(&state)
            throw error
        }
        var number = 1
        while true {
            let failure: any Error
            switch await rotationAttempt(&state, from: current, to: next) {
            case .rotated:
                return state
            case .refused(let error):
                try? keepCurrentKey(&state)
                throw error
            case .stuck(let error):
                throw error
            case .notSent(let error):
                failure = error
            case .unknown(let error):
                if try await settle(&state) == .pendingKeyHeld { return state }
                failure = error
            }
            guard RetryPolicy.isRetryable(failure), number < options.retry.maxAttempts else {
                try? keepCurrentKey(&state)
                throw failure
            }
            do {
                try await options.retry.sleep(options.retry.delay(afterAttempt: number))
            } catch {
                try? keepCurrentKey(&state)
                throw error
            }
            number += 1
        }
    }

    private enum RotationAttempt {
        /// The server switched to the new key and the registrar did too.
        case rotated
        /// The server answered no (4xx), or the request could not be made: the old key stays.
        case refused(any Error)
        /// Nothing was sent (no challenge came): the old key stays, and a retry may help.
        case notSent(any Error)
        /// The request went out and no verdict came back: the server may have switched.
        case unknown(any Error)
        /// The server switched, but the registrar could not record it; the next call settles it.
        case stuck(any Error)
    }

    private func rotationAttempt(_ state: inout DeviceRegistrationState, from current: DeviceKey, to next: DeviceKey) async -> RotationAttempt {
        let body: Data
        let url: URL
        do {
            let challenge = try await api.challenge(appId: state.appId).challenge
            body = Data(StrictJSON.serialize([
                "challenge": .string(challenge), "new_public_key": .string(next.publicKeyText),
                "proof": .string(Data(try next.derSignature(Array(challenge.utf8))).base64EncodedString()),
            ]))
            url = try api.url("/v1/device/rotate-key")
        } catch {
            return RetryPolicy.isRetryable(error) ? .notSent(error) : .refused(error)
        }
        let data: Data
        let response: HTTPURLResponse
        do {
            (data, response) = try await signedExchange(&state, signingWith: .deviceKey(current), method: "POST", url: url, body: body)
        } catch {
            return RetryPolicy.isRetryable(error) ? .unknown(error) : .refused(error)
        }
        switch response.statusCode {
        case 200..<300:
            let answer = try? JSONDecoder().decode(DeviceStatusResponse.self, from: data)
            do {
                try keyStore.promoteKey(named: next.name, to: state.keyName)
                try save(&state, moving: .registered) { rotated in
                    rotated.pendingKeyName = nil
                    rotated.keyRotatedAt = Self.date(answer?.keyRotatedAt) ?? clock()
                    rotated.status = answer?.status ?? rotated.status
                }
            } catch {
                return .stuck(error)
            }
            return .rotated
        case 500...:
            return .unknown(DeviceAPI.refusal(status: response.statusCode, data: data).error)
        default:
            return .refused(DeviceAPI.refusal(status: response.statusCode, data: data).error)
        }
    }

    enum Settlement: Equatable {
        /// The server holds the key under the current name (the old key, or the new one promoted before a stop).
        case currentKeyHeld
        /// The server holds the staged key, which now has the current name.
        case pendingKeyHeld
    }

    /// Asks the server which of the two keys of a rotation it holds: a signed status call with the current key,
    /// then with the staged one. The staged key the server holds is promoted and the state saved `registered`;
    /// when the current key is held, nothing changes here (the caller decides).
    func settle(_ state: inout DeviceRegistrationState) async throws -> Settlement {
        guard let pendingName = state.pendingKeyName else { return .currentKeyHeld }
        if let current = try keyStore.key(named: state.keyName),
            try await serverHolds(DeviceKey(name: state.keyName, signer: current), &state) {
            return .currentKeyHeld
        }
        if let pending = try keyStore.key(named: pendingName), try await serverHolds(DeviceKey(name: pendingName, signer: pending), &state) {
            try keyStore.promoteKey(named: pendingName, to: state.keyName)
            try save(&state, moving: .registered) { $0.pendingKeyName = nil }
            return .pendingKeyHeld
        }
        throw KeywardKitError.unusableKey(state.keyName, reason: "the server accepts neither the current device key nor the next one")
    }

    /// Settles a rotation this process did not finish (it stopped, or gave up without a verdict).
    func settleInterruptedRotation(_ state: inout DeviceRegistrationState) async throws {
        if try await settle(&state) == .currentKeyHeld { try keepCurrentKey(&state) }
    }

    /// The rotation is over without a switch: the staged key goes, the state is `registered` with the current key.
    private func keepCurrentKey(_ state: inout DeviceRegistrationState) throws {
        if let pendingName = state.pendingKeyName { try keyStore.deleteKey(named: pendingName) }
        try save(&state, moving: .registered) { $0.pendingKeyName = nil }
    }

    /// Whether the server takes `key`'s signature for this device: a signed `GET /v1/device/status`. A pending or
    /// refused device's key is still the one the server checked the signature with (its status is refused after).
    /// The answer's status and rotation time are copied into `state` (not saved).
    private func serverHolds(_ key: DeviceKey, _ state: inout DeviceRegistrationState) async throws -> Bool {
        let (data, response) = try await signedExchange(&state, signingWith: .deviceKey(key), method: "GET", url: try api.url("/v1/device/status"), body: nil)
        if response.statusCode == 200 {
            let answer = try? JSONDecoder().decode(DeviceStatusResponse.self, from: data)
            state.status = answer?.status ?? state.status
            state.keyRotatedAt = Self.date(answer?.keyRotatedAt) ?? state.keyRotatedAt
            return true
        }
        let refusal = DeviceAPI.refusal(status: response.statusCode, data: data)
        switch refusal.code {
        case ErrorCode.devicePending.rawValue:
            state.status = "pending"
            return true
        case ErrorCode.deviceRevoked.rawValue:
            state.status = "rejected"
            return true
        case ErrorCode.invalidSignature.rawValue:
            return false
        default:
            throw refusal.error
        }
    }
}
