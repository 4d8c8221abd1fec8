// A refused device request: status, stable code, message, and for attestations the failed check.
import HTTPTypes
import KeywardAttestation
import KeywardJOSE
import KeywardWire

/// A refused device request: the HTTP status, a stable code from the device taxonomy, a message naming the input
/// at fault, and for attestation refusals the check that failed.
public struct DeviceError: Error, Sendable, Equatable, CustomStringConvertible {
    public let status: HTTPResponse.Status
    public let code: ErrorCode
    public let message: String
    public let reason: String?
    public let serverTimestamp: Int64?

    init(_ status: HTTPResponse.Status, _ code: ErrorCode, _ message: String, reason: String? = nil, serverTimestamp: Int64? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.reason = reason
        self.serverTimestamp = serverTimestamp
    }

    public var description: String { "\(code.rawValue): \(message)" }

    static func invalidRequest(_ message: String) -> DeviceError { DeviceError(.badRequest, .invalidRequest, message) }

    static func notConfigured(_ appId: String, realm: String) -> DeviceError {
        DeviceError(.notFound, .notConfigured, "app '\(displayable(appId))' is not registered in realm '\(realm)'")
    }

    /// The client learns which check failed, never the detail: that names the app's packages, digests and keys
    /// (security review M4). The detail goes to the audit log.
    static func invalidAttestation(_ failure: AttestationFailure) -> DeviceError {
        DeviceError(.badRequest, .invalidAttestation, "the attestation was refused (\(failure.reason.rawValue))", reason: failure.reason.rawValue)
    }

    static let unavailable = DeviceError(.serviceUnavailable, .unavailable, "the device service is temporarily unavailable")
}
