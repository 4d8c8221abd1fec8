// Push-MFA API refusals in the original's shape, and the original's input limits and validators.
import Foundation
import KeywardJOSE

/// A refusal of the push-MFA API, in the original's shape: `{"error": message}` with the status, except
/// 401, whose body is `{"error":"HTTP 401 Unauthorized"}` with the message in `WWW-Authenticate`
/// (docs/PUSH-MFA-PROTOCOL.md §2.1). Messages are part of the wire contract: apps match on some of them.
public struct PushMFAError: Error, Equatable, Sendable, CustomStringConvertible, StatusBearingError {
    public let status: Int
    public let message: String

    public init(_ status: Int, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { "\(status) \(message)" }

    var httpStatus: Int { status }

    static func badRequest(_ message: String) -> PushMFAError { PushMFAError(400, message) }
    static func unauthorized(_ message: String) -> PushMFAError { PushMFAError(401, message) }
    static func forbidden(_ message: String) -> PushMFAError { PushMFAError(403, message) }
    static func notFound(_ message: String) -> PushMFAError { PushMFAError(404, message) }
    static func conflict(_ message: String) -> PushMFAError { PushMFAError(409, message) }
    static let unavailable = PushMFAError(503, "unknown_error")

    static func missingField(_ name: String) -> PushMFAError { .badRequest("Missing field: \(name)") }
    static func fieldTooLong(_ name: String) -> PushMFAError { .badRequest("Field too long: \(name)") }
}

/// The input limits of the original's server SPI, at their defaults (docs/PUSH-MFA-PROTOCOL.md §7.3).
enum PushMFALimits {
    static let jwtLength = 16384
    static let jwkJSONLength = 8192
    static let userIdLength = 128
    static let deviceIdLength = 128
    static let deviceTypeLength = 64
    static let deviceLabelLength = 128
    static let credentialIdLength = 128
    static let pushProviderIdLength = 2048
    static let pushProviderTypeLength = 64
    static let nonceLength = 256
    static let dpopJTILength = 128
    static let watchSecretLength = 128
}

/// The original's input validators, same messages (docs/PUSH-MFA-PROTOCOL.md §2.2).
enum PushMFAInput {
    /// A required string claim or field: present, a string, within `maxLength`, no control characters.
    static func required(_ object: JSONObject, _ name: String, maxLength: Int) throws(PushMFAError) -> String {
        guard let value = object[name]?.stringValue, !value.isBlank else { throw .missingField(name) }
        return try checked(value, name, maxLength: maxLength)
    }

    /// An optional string member: absent or blank gives nil.
    static func optional(_ object: JSONObject, _ name: String, maxLength: Int) throws(PushMFAError) -> String? {
        guard let value = object[name] else { return nil }
        guard let text = value.stringValue else {
            if case .null = value { return nil }
            throw .badRequest("Invalid field: \(name)")
        }
        guard !text.isBlank else { return nil }
        return try checked(text, name, maxLength: maxLength)
    }

    static func checked(_ value: String, _ name: String, maxLength: Int) throws(PushMFAError) -> String {
        guard value.count <= maxLength else { throw .fieldTooLong(name) }
        guard !value.containsISOControl else {
            throw .badRequest("Invalid characters in field: \(name)")
        }
        return value
    }

    /// Exactly 36 characters that parse as a UUID; returned lower-cased (Keyward's ids are lower-case).
    static func uuid(_ value: String, _ name: String) throws(PushMFAError) -> String {
        guard value.utf8.count == 36, UUID(uuidString: value) != nil else { throw .badRequest("Invalid UUID field: \(name)") }
        return value.lowercased()
    }

    static let privateKeyMembers: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]
}
