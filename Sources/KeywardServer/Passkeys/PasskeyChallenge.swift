// A ceremony's challenge: sealed, so that options write nothing, bound to the browser that asked and spent once.
import Foundation
import KeywardJOSE

/// What a passkey ceremony's challenge carries. The challenge bytes the browser signs over are the sealed value
/// itself (`SealedJSON`, AES-GCM under a key derived from the master key for this purpose and the realm), so
/// asking for options writes nothing (anyone may load the sign-in page), any node opens what another sealed, and
/// nobody can make one up. Its `id` is spent once in Core's single-use records when a response is accepted.
struct PasskeyChallenge: Sendable, Equatable {
    enum Ceremony: String, Sendable {
        /// Registering a passkey for `userId`, from a signed-in session.
        case registration = "reg"
        /// Signing in with a passkey as the first factor, from the sign-in page.
        case signIn = "in"
        /// The second step of a sign-in whose first factor `userId` passed.
        case secondFactor = "2fa"
    }

    static let purpose = "keyward passkey challenge v1"
    /// How long a ceremony may take: the options' `timeout`, and a little for the request to arrive.
    static let lifetime: TimeInterval = 300

    var id: String
    var ceremony: Ceremony
    /// What the browser holds, hashed: its session's id hash, or its pre-login state's nonce.
    var binding: String
    var userId: String?
    var expiresAt: Date
    /// The sealed text, once opened from a client data: the bytes the authenticator signed over.
    var sealedText = ""

    init(ceremony: Ceremony, binding: String, userId: String?, now: Date) {
        id = Base64URL.encode(SecureRandom.bytes(16))
        self.ceremony = ceremony
        self.binding = binding
        self.userId = userId
        expiresAt = now.addingTimeInterval(Self.lifetime)
    }

    func sealed(with sealer: SealedJSON, realm: String) -> String {
        var object: JSONObject = [
            "id": .string(id), "c": .string(ceremony.rawValue), "b": .string(binding), "exp": .number(expiresAt.timeIntervalSince1970.rounded(.up)),
        ]
        if let userId { object["u"] = .string(userId) }
        return sealer.seal(object, realm: realm)
    }

    /// The challenge a client data names, when it was sealed for this realm and purpose; nil otherwise.
    init?(sealed text: String, opener: SealedJSON, realm: String) {
        guard let object = opener.open(text, realm: realm), let id = object["id"]?.stringValue,
            let ceremony = object["c"]?.stringValue.flatMap(Ceremony.init(rawValue:)), let binding = object["b"]?.stringValue,
            let expiry = object["exp"]?.numberValue
        else { return nil }
        self.id = id
        self.ceremony = ceremony
        self.binding = binding
        self.userId = object["u"]?.stringValue
        self.expiresAt = Date(timeIntervalSince1970: expiry)
    }
}

/// Why a passkey ceremony was refused: the verifier's reasons (`WebAuthnReason`) and the ones that need storage.
/// The raw values are the stable `reason` of the `passkey_refused` error.
struct PasskeyRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    let reason: String
    let detail: String

    init(_ reason: String, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    static let challengeInvalid = "webauthn_challenge_invalid"
    static let challengeExpired = "webauthn_challenge_expired"
    static let challengeUsed = "webauthn_challenge_used"
    static let challengeOfAnotherBrowser = "webauthn_challenge_other_session"
    static let unknownCredential = "webauthn_unknown_credential"
    static let userHandleMismatch = "webauthn_user_handle_mismatch"
    static let credentialExists = "webauthn_credential_exists"
    static let credentialSuspended = "webauthn_credential_suspended"
    static let idMismatch = "webauthn_id_mismatch"
    static let userDisabled = "webauthn_user_disabled"
    static let raced = "webauthn_concurrent_use"
    static let tooMany = "webauthn_too_many_passkeys"

    var description: String { "\(reason): \(detail)" }
}
