// Every error KeywardKit throws, each naming the input or server answer at fault.
import KeywardWire

/// Every error KeywardKit throws. Each case names the input or the server answer at fault; `description` says it
/// in one line.
public enum KeywardKitError: Error, CustomStringConvertible, Equatable {
    /// A key name that is empty, longer than 64 bytes, or has characters other than letters, digits, `-` and `_`.
    case invalidKeyName(String)
    /// A key file (the path) that does not hold a stored software key.
    case corruptKeyFile(String)
    /// `promoteKey` found no key under this name.
    case noSuchKey(String)
    /// A Keychain call about `key` failed; `status` is its OSStatus.
    case keychain(key: String, operation: String, status: Int32)
    /// A stored key that exists but cannot be used: a Keychain item that is not a stored key, or a Secure Enclave
    /// handle the enclave will not open or make.
    case unusableKey(String, reason: String)
    /// A URL string that does not parse.
    case invalidURL(String)
    /// The server refused the request; `code` is its stable error code when it sent one.
    case server(status: Int, code: String?, description: String?)
    /// An answer the protocol does not allow: not HTTP, not a JWT where one was due, a second nonce demand.
    case unexpectedResponse(String)
    /// An enrollment or confirm input that is neither a JWT nor a link holding one.
    case invalidLink(String)
    /// A key choice that does not fit (the option, e.g. `alg`, `curve`, `key-type`, and why).
    case invalidOption(String, String)
    /// A realm-signed token (enrollment or confirm) failed verification.
    case untrustedToken(String)
    /// No enrolled device is saved in this directory.
    case notEnrolled(String)
    /// No HTTP answer at all: connection refused, unknown host, TLS failure, timeout.
    case unreachable(url: String, reason: String)
    /// A challenge id that is not a UUID; it would otherwise become part of a URL path.
    case invalidChallengeId(String)
    /// A user-verification answer that cannot be right (checked before it costs an attempt).
    case invalidAnswer(String)
    /// A host token from the app's ``TokenSigner`` that failed pre-validation; it was not sent.
    case invalidHostToken(HostTokenProblem)
    /// The token endpoint refused a host-token exchange. `code` is the RFC 6749 §5.2 error (`invalid_grant`, …) and
    /// `reason` Keyward's finer, stable name for the rule at fault (`expired`, `jti_replayed`,
    /// `subject_not_enrolled`, …), when the server sent them.
    case exchangeRefused(status: Int, code: String?, reason: String?, description: String?)
    /// The realm answered a sign-in with an error (`access_denied`, `login_required`, …: RFC 6749 §4.1.2.1).
    case signInRefused(code: String, description: String?)
    /// A sign-in's answer that is not the one this request expects: another redirect URI, `state` or `iss`.
    case signInMismatch(String)
    /// No one is signed in: start a sign-in first.
    case notSignedIn
    /// The app's token signer gave no answer within the session's signer timeout.
    case signerTimedOut(after: Duration)
    /// A device registration moved between phases its state machine does not connect (``RegistrationPhase``).
    case invalidStateTransition(from: RegistrationPhase, to: RegistrationPhase)
    /// An app id that is not 1-255 letters, digits, `.`, `-` or `_` (what the server accepts).
    case invalidAppId(String)
    /// A device registration state file (the path) that does not hold a registration state.
    case corruptStateFile(String)
    /// No device is registered for this app id: register it before signing requests or rotating its key.
    case notRegistered(appId: String)
    /// Another registration or key rotation for this app id is under way in this process.
    case registrationInProgress(appId: String)
    /// The app id's device is registered with another realm (`issuer`); a state store keeps one registration per app.
    case registeredElsewhere(appId: String, issuer: String)
    /// A device id was asked for, but the installation already registers as `registered`.
    case deviceIdMismatch(registered: String, requested: String)
    /// The realm refused a passkey ceremony: `code` is the API's error (`passkey_refused`, `passkeys_disabled`, …),
    /// `reason` the check at fault (`webauthn_origin_not_allowed`, …).
    case passkeyRefused(status: Int, code: String?, reason: String?, description: String?)
    /// A password sign-in that needs a second step this client cannot take (push approval): sign in with a passkey.
    case secondStepRequired(next: String)

    /// One line saying what failed, naming the input, and for Keychain failures the usual cause.
    public var description: String {
        switch self {
        case .invalidKeyName(let name): "key name '\(name)' is invalid (1-64 letters, digits, '-', '_')"
        case .corruptKeyFile(let path): "key file \(path) is corrupt"
        case .noSuchKey(let name): "no key named '\(name)'"
        case .keychain(let key, let operation, let status): "Keychain \(operation) of key '\(key)' failed: OSStatus \(status)\(Self.hint(status))"
        case .unusableKey(let name, let reason): "key '\(name)' cannot be used: \(reason)"
        case .invalidURL(let url): "'\(url)' is not a valid URL"
        case .server(let status, let code, let description):
            "server answered \(status)\(code.map { " \($0)" } ?? "")\(description.map { ": \($0)" } ?? "")"
        case .unexpectedResponse(let detail): "unexpected response: \(detail)"
        case .invalidLink(let detail): "invalid link: \(detail)"
        case .invalidOption(let option, let detail): "--\(option): \(detail)"
        case .untrustedToken(let detail): "token rejected: \(detail)"
        case .notEnrolled(let directory): "no enrolled device in \(directory) (run `keyward-device enroll <link>` first)"
        case .unreachable(let url, let reason): "cannot reach \(url): \(reason)"
        case .invalidChallengeId(let value): "'\(value.prefix(80))' is not a challenge id (a UUID)"
        case .invalidAnswer(let detail): "--answer: \(detail)"
        case .invalidHostToken(let problem): "host token not sent: \(problem)"
        case .exchangeRefused(let status, let code, let reason, let description):
            "host token exchange refused (\(status)\(code.map { " \($0)" } ?? "")\(reason.map { ", \($0)" } ?? ""))\(description.map { ": \($0)" } ?? "")"
        case .signInRefused(let code, let description): "the realm refused the sign-in: \(code)\(description.map { " (\($0))" } ?? "")"
        case .signInMismatch(let problem): "the sign-in's answer does not match its request: \(problem)"
        case .notSignedIn: "no one is signed in: start a sign-in first"
        case .signerTimedOut(let after): "the token signer did not answer within \(after)"
        case .invalidStateTransition(let from, let to): "device registration cannot move from \(from.rawValue) to \(to.rawValue)"
        case .invalidAppId(let appId): "app id '\(appId.prefix(80))' is invalid (1-255 letters, digits, '.', '-', '_')"
        case .corruptStateFile(let path): "device registration state \(path) is corrupt"
        case .notRegistered(let appId): "no device is registered for app '\(appId)' (register it first)"
        case .registrationInProgress(let appId): "a registration or key rotation for app '\(appId)' is under way"
        case .registeredElsewhere(let appId, let issuer): "app '\(appId)' is registered with \(issuer); use that issuer or another state store"
        case .deviceIdMismatch(let registered, let requested): "this installation registers as device '\(registered)', not '\(requested)'"
        case .passkeyRefused(let status, let code, let reason, let description):
            "the realm refused the passkey (\(status)\(code.map { " \($0)" } ?? "")\(reason.map { ", \($0)" } ?? ""))\(description.map { ": \($0)" } ?? "")"
        case .secondStepRequired(let next): "the sign-in needs a second step at \(next) that this client cannot take"
        }
    }

    /// The two statuses a developer meets first, spelled out (the values are Security framework constants, which
    /// this file cannot import on Linux).
    private static func hint(_ status: Int32) -> String {
        switch status {
        case -25308: " (errSecInteractionNotAllowed: the device is locked)"
        case -34018: " (errSecMissingEntitlement: the app has no keychain-access-groups entitlement)"
        default: ""
        }
    }
}
