import Foundation

/// One check of a Play Integrity verdict as the report lists it: passed, or not checked and why. A failed check is
/// never listed: it ends the verification with its `AttestationFailure`.
public struct PlayIntegrityCheck: Sendable, Equatable, Encodable {
    public enum Outcome: String, Sendable, Encodable {
        case passed = "PASSED"
        case notChecked = "NOT_CHECKED"
    }

    /// decoding, requestPackage, nonce, timestamp, appRecognition, appIdentity, deviceIntegrity.
    public let name: String
    public let outcome: Outcome
    public let detail: String

    public init(_ name: String, _ outcome: Outcome, _ detail: String) {
        self.name = name
        self.outcome = outcome
        self.detail = detail
    }
}

/// One rule of `PlayIntegrityPolicy`: refuses with its own stable reason, or says what it found.
protocol PlayIntegrityRule: Sendable {
    func check(_ verdict: PlayIntegrityVerdict, at time: Date) throws(AttestationFailure) -> PlayIntegrityCheck
}
