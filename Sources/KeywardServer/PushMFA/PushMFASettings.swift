// Per-realm push-MFA settings, with the original's names and defaults plus Keyward's own switches.
import Foundation
import KeywardJOSE

/// Per-realm push-MFA settings: the Keycloak authenticator and required-action configuration, same names and
/// defaults (docs/PUSH-MFA-PROTOCOL.md §7.1), plus Keyward's own switches. Stored as one JSON object per realm.
public struct PushMFASettings: Sendable, Equatable {
    /// Which of a user's devices a login challenge goes to.
    public enum LoginDevices: String, Sendable, CaseIterable {
        /// Every enrolled device gets the push; whichever answers first decides.
        case all
        /// Only the most recently enrolled device (closest to the original's "first credential").
        case newest
    }

    public var loginChallengeTtlSeconds = 240
    public var maxPendingChallenges = 1
    public var userVerification: UserVerification.Mode = .none
    public var userVerificationPinLength = 4
    public var sameDeviceIncludeUserVerification = false
    public var loginAppUniversalLink = "my-secure://confirm"
    public var autoAddRequiredAction = true
    public var waitChallengeEnabled = false
    public var waitChallengeBaseSeconds = 10
    public var waitChallengeMaxSeconds = 3600
    public var waitChallengeResetHours = 24
    public var enrollmentChallengeTtlSeconds = 240
    public var enrollmentAppUniversalLink = "my-secure://enroll"
    public var enrollmentUseRequestUri = false
    public var enrollmentRequestUriTtlSeconds: Int?
    /// `dpop-require-for-enrollment`. Off by default here so the original's demo clients, which enroll without
    /// any Authorization or DPoP header, work unchanged; a DPoP header that is sent is always verified.
    public var requireDpopForEnrollment = false
    /// Keyward: key rotation must carry `proofOfPossession` signed by the new key. Off by default because the
    /// original's clients do not send one; without it, whoever holds the current key and token can swap in any
    /// key, including one they do not hold (docs/SECURITY.md).
    public var requireRotationProof = false
    /// Keyward: the most devices one user may enroll; a further enrollment is refused until one is removed
    /// (re-enrolling a device id already enrolled replaces it and is always allowed).
    public var maxDevicesPerUser = 10
    /// Keyward: users without a device are sent to enrollment after password login.
    public var requirePushMfa = false
    public var loginDevices: LoginDevices = .all
    /// Keyward (issue 32): only devices whose key was attested at this level approve logins — push credentials made
    /// on a registered device's own key (`POST …/v1/device/push-mfa`); a phone enrolled by QR code never qualifies
    /// unless this is `none` (the default, `off` on the command line).
    public var requireAttestedDevice: DeviceAttestationLevel = .none
    /// Keyward: the push notification's title and body for this realm's users (the original localises them from
    /// the login theme); nil keeps the node's `push.fcm.title` / `push.fcm.body` (APNs: the same defaults).
    public var notificationTitle: String?
    public var notificationBody: String?
    /// Keyward: the text in other languages, by lower-case language tag (`notificationTitle.de`,
    /// `notificationBody.pt-br`), chosen by the login browser's Accept-Language as the original chooses by the
    /// user's locale. A language without its own text gets `notificationTitle` / `notificationBody`.
    public var localizedNotificationTitles: [String: String] = [:]
    public var localizedNotificationBodies: [String: String] = [:]

    public static let maximumNotificationLanguages = 50

    public init() {}

    /// The title and body for a reader who prefers `languages` (most preferred first): per field, the first
    /// language with its own text — by exact tag, else by its primary subtag (`de-at` → `de`) — else the default.
    public func notificationText(for languages: [String]) -> (title: String?, body: String?) {
        func pick(_ localized: [String: String], _ fallback: String?) -> String? {
            for tag in languages {
                if let text = localized[tag] { return text }
                if let primary = tag.split(separator: "-").first, let text = localized[String(primary)] { return text }
            }
            return fallback
        }
        return (pick(localizedNotificationTitles, notificationTitle), pick(localizedNotificationBodies, notificationBody))
    }

    /// The challenge cap, forced to 1 with wait-challenge rate limiting as in the original.
    public var effectiveMaxPendingChallenges: Int { waitChallengeEnabled ? 1 : max(1, maxPendingChallenges) }

    public var jsonObject: JSONObject {
        var object: JSONObject = [
            "loginChallengeTtlSeconds": .number(Double(loginChallengeTtlSeconds)),
            "maxPendingChallenges": .number(Double(maxPendingChallenges)),
            "userVerification": .string(userVerification.rawValue),
            "userVerificationPinLength": .number(Double(userVerificationPinLength)),
            "sameDeviceIncludeUserVerification": .bool(sameDeviceIncludeUserVerification),
            "loginAppUniversalLink": .string(loginAppUniversalLink),
            "autoAddRequiredAction": .bool(autoAddRequiredAction),
            "waitChallengeEnabled": .bool(waitChallengeEnabled),
            "waitChallengeBaseSeconds": .number(Double(waitChallengeBaseSeconds)),
            "waitChallengeMaxSeconds": .number(Double(waitChallengeMaxSeconds)),
            "waitChallengeResetHours": .number(Double(waitChallengeResetHours)),
            "enrollmentChallengeTtlSeconds": .number(Double(enrollmentChallengeTtlSeconds)),
            "enrollmentAppUniversalLink": .string(enrollmentAppUniversalLink),
            "enrollmentUseRequestUri": .bool(enrollmentUseRequestUri),
            "requireDpopForEnrollment": .bool(requireDpopForEnrollment),
            "requireRotationProof": .bool(requireRotationProof),
            "maxDevicesPerUser": .number(Double(maxDevicesPerUser)),
            "requirePushMfa": .bool(requirePushMfa),
            "loginDevices": .string(loginDevices.rawValue),
            "requireAttestedDevice": .string(requireAttestedDevice.rawValue),
        ]
        if let ttl = enrollmentRequestUriTtlSeconds { object["enrollmentRequestUriTtlSeconds"] = .number(Double(ttl)) }
        if let notificationTitle { object["notificationTitle"] = .string(notificationTitle) }
        if let notificationBody { object["notificationBody"] = .string(notificationBody) }
        for (tag, text) in localizedNotificationTitles { object["notificationTitle.\(tag)"] = .string(text) }
        for (tag, text) in localizedNotificationBodies { object["notificationBody.\(tag)"] = .string(text) }
        return object
    }

    /// Applies `key = value` settings (as given on the command line or read back from storage).
    /// Unknown keys and values out of range are errors naming the key; the original's silent fallbacks
    /// to defaults would hide typos in an operator's configuration.
    public mutating func apply(_ key: String, _ value: String) throws(PushMFASettingsError) {
        func integer(_ range: ClosedRange<Int>) throws(PushMFASettingsError) -> Int {
            guard let number = Int(value.trimmingCharacters(in: .whitespaces)), range.contains(number) else {
                throw PushMFASettingsError(key: key, problem: "must be a whole number in \(range.lowerBound)...\(range.upperBound), got '\(value.prefix(32))'")
            }
            return number
        }
        func boolean() throws(PushMFASettingsError) -> Bool {
            switch value.lowercased() {
            case "true", "1", "yes", "on": return true
            case "false", "0", "no", "off": return false
            default: throw PushMFASettingsError(key: key, problem: "must be true or false, got '\(value.prefix(32))'")
            }
        }
        func link() throws(PushMFASettingsError) -> String {
            guard value.utf8.count <= 512, !value.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) || $0 == " " }) else {
                throw PushMFASettingsError(key: key, problem: "must be a link prefix such as my-secure://enroll without spaces")
            }
            return value
        }
        /// Shown on a lock screen: one line of at most 200 characters; empty goes back to the default.
        func notificationText() throws(PushMFASettingsError) -> String? {
            guard value.count <= 200, !value.containsISOControl else {
                throw PushMFASettingsError(key: key, problem: "must be one line of at most 200 characters")
            }
            return value.isBlank ? nil : value
        }
        /// `notificationTitle.<language>`: sets, or with an empty value removes, one language's text. Tags are
        /// case-insensitive (`pt-BR` is stored as `pt-br`).
        func localized(_ texts: inout [String: String], tag given: Substring) throws(PushMFASettingsError) {
            let tag = given.lowercased()
            guard AcceptLanguage.isLanguageTag(tag) else {
                throw PushMFASettingsError(key: key, problem: "must end in a language tag such as de or pt-BR")
            }
            let text = try notificationText()
            guard text == nil || texts[tag] != nil || texts.count < Self.maximumNotificationLanguages else {
                throw PushMFASettingsError(key: key, problem: "at most \(Self.maximumNotificationLanguages) languages")
            }
            texts[tag] = text
        }
        if key.hasPrefix("notificationTitle.") { return try localized(&localizedNotificationTitles, tag: key.dropFirst("notificationTitle.".count)) }
        if key.hasPrefix("notificationBody.") { return try localized(&localizedNotificationBodies, tag: key.dropFirst("notificationBody.".count)) }
        switch key {
        case "loginChallengeTtlSeconds": loginChallengeTtlSeconds = try integer(10...3600)
        case "maxPendingChallenges": maxPendingChallenges = try integer(1...100)
        case "userVerification":
            guard let mode = UserVerification.Mode(configured: value) else {
                throw PushMFASettingsError(key: key, problem: "must be none, number-match or pin, got '\(value.prefix(32))'")
            }
            userVerification = mode
        case "userVerificationPinLength": userVerificationPinLength = try integer(1...UserVerification.maximumPinLength)
        case "sameDeviceIncludeUserVerification": sameDeviceIncludeUserVerification = try boolean()
        case "loginAppUniversalLink": loginAppUniversalLink = try link()
        case "autoAddRequiredAction": autoAddRequiredAction = try boolean()
        case "waitChallengeEnabled": waitChallengeEnabled = try boolean()
        case "waitChallengeBaseSeconds": waitChallengeBaseSeconds = try integer(1...86400)
        case "waitChallengeMaxSeconds": waitChallengeMaxSeconds = try integer(1...86400)
        case "waitChallengeResetHours": waitChallengeResetHours = try integer(1...720)
        case "enrollmentChallengeTtlSeconds": enrollmentChallengeTtlSeconds = try integer(10...3600)
        case "enrollmentAppUniversalLink": enrollmentAppUniversalLink = try link()
        case "enrollmentUseRequestUri": enrollmentUseRequestUri = try boolean()
        case "enrollmentRequestUriTtlSeconds":
            enrollmentRequestUriTtlSeconds = value.isEmpty || value == "unset" ? nil : try integer(1...3600)
        case "requireDpopForEnrollment": requireDpopForEnrollment = try boolean()
        case "requireRotationProof": requireRotationProof = try boolean()
        case "maxDevicesPerUser": maxDevicesPerUser = try integer(1...100)
        case "requirePushMfa": requirePushMfa = try boolean()
        case "loginDevices":
            guard let choice = LoginDevices(rawValue: value) else {
                throw PushMFASettingsError(key: key, problem: "must be all or newest, got '\(value.prefix(32))'")
            }
            loginDevices = choice
        case "notificationTitle": notificationTitle = try notificationText()
        case "notificationBody": notificationBody = try notificationText()
        case "requireAttestedDevice":
            guard let level = value == "off" ? DeviceAttestationLevel.none : DeviceAttestationLevel(rawValue: value) else {
                throw PushMFASettingsError(key: key, problem: "must be off, app-attested or hardware-key, got '\(value.prefix(32))'")
            }
            requireAttestedDevice = level
        default:
            throw PushMFASettingsError(key: key, problem: "unknown setting; known: \(Self.keys.joined(separator: ", "))")
        }
    }

    public static let keys = [
        "loginChallengeTtlSeconds", "maxPendingChallenges", "userVerification", "userVerificationPinLength",
        "sameDeviceIncludeUserVerification", "loginAppUniversalLink", "autoAddRequiredAction", "waitChallengeEnabled",
        "waitChallengeBaseSeconds", "waitChallengeMaxSeconds", "waitChallengeResetHours", "enrollmentChallengeTtlSeconds",
        "enrollmentAppUniversalLink", "enrollmentUseRequestUri", "enrollmentRequestUriTtlSeconds",
        "requireDpopForEnrollment", "requireRotationProof", "maxDevicesPerUser", "requirePushMfa", "loginDevices", "requireAttestedDevice",
        "notificationTitle", "notificationBody", "notificationTitle.<language>", "notificationBody.<language>",
    ]

    /// Reads the stored JSON form back; values written by an older or newer build that no longer fit are
    /// reported, not silently dropped.
    public init(json: JSONObject) throws(PushMFASettingsError) {
        for (key, value) in json {
            let text: String
            switch value {
            case .string(let string): text = string
            case .bool(let flag): text = flag ? "true" : "false"
            case .number(let number): text = String(Int(number))
            default: throw PushMFASettingsError(key: key, problem: "stored value has an unexpected type")
            }
            try apply(key, text)
        }
    }
}

public struct PushMFASettingsError: Error, Equatable, CustomStringConvertible {
    public let key: String
    public let problem: String

    public var description: String { "push-MFA setting \(key): \(problem)" }
}
