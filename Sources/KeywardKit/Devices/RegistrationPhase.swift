/// Where an installation's registration with one app stands. Saved with the rest of its
/// ``DeviceRegistrationState`` at every move, so a process that stops between two phases resumes from the last
/// one written. The raw values are the state machine's names as device SDKs write them.
public enum RegistrationPhase: String, Codable, Sendable, CaseIterable {
    /// Nothing registered; the starting point, and where a failed or interrupted attempt returns.
    case unregistered
    /// A challenge was fetched (it is single-use and short-lived, so it is never saved).
    case challengeReceived
    /// The device key exists and signed the proof over the challenge.
    case keyReady
    /// A registration or key rotation was sent and its answer is not known yet.
    case registering
    /// The server holds the device key.
    case registered
    /// The key the server holds is gone from this device (the OS removed it); only a fresh registration helps.
    case keyInvalid

    /// The phases this one may move to. Anything else is refused with
    /// ``KeywardKitError/invalidStateTransition(from:to:)``.
    ///
    /// Besides the path to `registered`, an attempt that fails (or stops) before its request is sent returns from
    /// `challengeReceived` or `keyReady` to `unregistered`, as one whose answer says "no" returns from `registering`;
    /// a key rotation leaves `registered` for `registering` and comes back to `registered` whether the server
    /// switched to the new key or kept the old one.
    public var successors: Set<RegistrationPhase> {
        switch self {
        case .unregistered: [.challengeReceived]
        case .challengeReceived: [.keyReady, .unregistered]
        case .keyReady: [.registering, .unregistered]
        case .registering: [.registered, .unregistered]
        case .registered: [.registering, .keyInvalid]
        case .keyInvalid: [.unregistered]
        }
    }

    /// Whether the state machine connects this phase to `next`.
    public func canMove(to next: RegistrationPhase) -> Bool {
        successors.contains(next)
    }

    /// `next`, when this phase may move there.
    public func moving(to next: RegistrationPhase) throws(KeywardKitError) -> RegistrationPhase {
        guard canMove(to: next) else { throw .invalidStateTransition(from: self, to: next) }
        return next
    }
}
