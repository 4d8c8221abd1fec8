// Sending a registered device's signed requests, correcting the clock on CLOCK_SKEW and retrying once.
import Foundation
import KeywardWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DeviceRegistrar {
    /// Sends a request signed for the registered device of `appId` and returns the server's answer, whatever its
    /// status. A device registered through App Attest signs with an assertion (``Asserter``), any other with its
    /// device key.
    ///
    /// `path` is relative to the realm (`/v1/device/status`, the default) or an absolute URL. When the server
    /// answers `CLOCK_SKEW`, the registrar learns the server's time from `server_timestamp`, saves the offset
    /// (``DeviceRegistrationState/clockOffsetMs``), and sends the request once more with a new timestamp and nonce.
    /// Likewise once when an assertion is refused for a counter that does not grow: calls made side by side can
    /// reach the server in another order than their assertions were made, and a fresh one exceeds them all.
    /// Throws ``KeywardKitError/notRegistered(appId:)`` when the app has no registered device, and
    /// ``KeywardKitError/noSuchKey(_:)`` when its key has gone from the key store (``registerDevice(appId:deviceId:)``
    /// then registers afresh).
    public func send(
        appId: String, method: String = "GET", path: String = "/v1/device/status", body: Data? = nil, contentType: String? = "application/json"
    ) async throws -> (Data, HTTPURLResponse) {
        var state = try await registeredState(appId: appId, settling: !rotations.contains(appId))
        let credential = try requestCredential(&state)
        return try await signedExchange(&state, signingWith: credential, method: method, url: try api.url(path), body: body, contentType: contentType)
    }

    /// A ``RequestSigner`` for the registered device of `appId`, with the clock offset learned so far, for requests
    /// sent some other way than ``send(appId:method:path:body:contentType:)``.
    public func requestSigner(appId: String) async throws -> RequestSigner {
        var state = try await registeredState(appId: appId, settling: !rotations.contains(appId))
        return RequestSigner(
            appId: state.appId, deviceId: state.deviceId, credential: try requestCredential(&state), clockOffsetMs: state.clockOffsetMs, clock: clock
        )
    }

    /// The saved state of a registered device of `appId`. With `settling`, a key rotation that stopped before its
    /// answer was known is settled first; without, one under way in this process is let be (its current key still
    /// signs until the server switches).
    func registeredState(appId: String, settling: Bool) async throws -> DeviceRegistrationState {
        try DeviceAppId.check(appId)
        guard var state = try stateStore.state(appId: appId) else { throw KeywardKitError.notRegistered(appId: appId) }
        guard state.issuer == api.issuer else { throw KeywardKitError.registeredElsewhere(appId: appId, issuer: state.issuer) }
        let rotating = state.phase == .registering && state.pendingKeyName != nil
        if rotating, settling {
            let claimed = rotations.insert(appId).inserted
            defer { if claimed { rotations.remove(appId) } }
            try await settleInterruptedRotation(&state)
        }
        guard state.phase == .registered || (rotating && !settling) else { throw KeywardKitError.notRegistered(appId: appId) }
        return state
    }

    /// Signs and sends one request; on `CLOCK_SKEW` learns the offset and sends it once more, signed anew; an
    /// assertion refused as `COUNTER_NOT_INCREASING` is made anew once.
    func signedExchange(
        _ state: inout DeviceRegistrationState, signingWith credential: RequestSigner.Credential, method: String, url: URL, body: Data?,
        contentType: String? = "application/json"
    ) async throws -> (Data, HTTPURLResponse) {
        var corrected = false
        var reasserted = false
        while true {
            let signer = RequestSigner(appId: state.appId, deviceId: state.deviceId, credential: credential, clockOffsetMs: state.clockOffsetMs, clock: clock)
            let headers = try await signer.sign(method: method, target: RequestSigner.target(of: url), body: Array(body ?? Data()))
            let (data, response) = try await api.exchange(method, url, body: body, contentType: contentType, headers: headers)
            guard response.statusCode == 401 else { return (data, response) }
            let refusal = DeviceAPI.refusal(status: response.statusCode, data: data)
            // A time before 1970 or after the year 5000 is no time to learn from (and would overflow the offset).
            if !corrected, refusal.code == ErrorCode.clockSkew.rawValue, let serverTime = refusal.serverTimestamp, (0...95_617_584_000).contains(serverTime) {
                state.clockOffsetMs = clockOffset(serverTime: serverTime)
                try rememberClockOffset(state.clockOffsetMs, appId: state.appId)
                corrected = true
            } else if !reasserted, case .appAttest = credential, refusal.reason == Self.counterNotIncreasing {
                reasserted = true
            } else {
                return (data, response)
            }
        }
    }

    /// The attestation verifiers' stable reason for an assertion whose counter does not exceed the stored one.
    static let counterNotIncreasing = "COUNTER_NOT_INCREASING"

    /// The server counts whole seconds, so its time lies in [T, T + 1): the middle of that second is the best guess.
    func clockOffset(serverTime: Int64) -> Int64 {
        serverTime * 1000 + 500 - Int64((clock().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// Saves a learned offset into the latest saved state, leaving the rest of it as it is: a rotation running
    /// beside this call may have saved a newer phase.
    private func rememberClockOffset(_ offset: Int64, appId: String) throws {
        guard var latest = try stateStore.state(appId: appId) else { return }
        latest.clockOffsetMs = offset
        try stateStore.save(latest)
    }
}
