// One provider sign-in's state, carried by the browser in an encrypted per-flow cookie until the callback.
import Crypto
import Foundation
import KeywardJOSE

/// One sign-in with an identity provider, held by the browser between the redirect to the provider and the
/// callback: the `state`, PKCE verifier and `nonce` Keyward made, the provider and issuer they were made for, where
/// to go afterwards, and when it began. Nothing is written on the server until the callback.
///
/// The cookie value is `t1.` + key id + `.` + base64url(AES-GCM(JSON)) under a key derived from the master key,
/// authenticated together with the cookie's name (so a value cannot move to another flow's cookie). Each flow has a
/// cookie of its own, named after its `state`, so two tabs signing in at once do not clobber each other. The key id
/// lets the key rotate: cookies under a retired id are refused, a new id is added to `TransactionKeys`.
struct SignInTransaction: Sendable, Equatable {
    var realm: String
    var alias: String
    /// The provider's issuer when the flow began; the callback refuses a provider whose issuer has changed since.
    var issuer: String
    var state: String
    var nonce: String
    var codeVerifier: String
    /// Same-origin path to continue to after the sign-in.
    var returnTo: String?
    var startedAt: Date
    /// The person was asked to sign in again (before deleting the account or linking a provider): the provider is
    /// asked to prompt for a credential whatever session it has.
    var reauthenticate: Bool = false
    /// Not a sign-in: the signed-in user of this id links the provider's identity to their account. The callback
    /// goes through only in a browser still signed in as that user.
    var linkUserId: String?

    /// The ADR's bound: a sign-in not finished in 10 minutes starts again.
    static let lifetime: TimeInterval = 600
    static let marker = "t1."

    static func begin(
        realm: String, alias: String, issuer: String, returnTo: String?, reauthenticate: Bool = false, linkUserId: String? = nil, now: Date
    ) -> SignInTransaction {
        SignInTransaction(
            realm: realm, alias: alias, issuer: issuer, state: Base64URL.encode(SecureRandom.bytes(32)), nonce: Base64URL.encode(SecureRandom.bytes(32)),
            // RFC 7636 §4.1: 43-128 characters; 32 random bytes give 43.
            codeVerifier: Base64URL.encode(SecureRandom.bytes(32)), returnTo: returnTo, startedAt: now, reauthenticate: reauthenticate,
            linkUserId: linkUserId
        )
    }

    /// RFC 7636 §4.2, S256.
    var codeChallenge: String { Base64URL.encode(SHA256.hash(data: Array(codeVerifier.utf8))) }

    /// The cookie's name: one per flow, found again from the callback's `state`. `__Host-` pins it to this origin
    /// where the browser allows the prefix (https only).
    static func cookieName(state: String, secure: Bool) -> String {
        let flow = Base64URL.encode(SHA256.hash(data: Array(state.utf8)).prefix(9))
        return (secure ? "__Host-" : "") + "keyward-signin-" + flow
    }

    /// Whether a cookie of that name is a sign-in transaction's (of either form, `__Host-` or not).
    static func isCookieName(_ name: String) -> Bool {
        name.hasPrefix("keyward-signin-") || name.hasPrefix("__Host-keyward-signin-")
    }

    /// How many unfinished sign-ins a browser keeps: more are older tabs given up on, and every cookie counts
    /// against the request-header limits of Keyward and the proxies before it.
    static let cookiesKept = 3

    func cookieValue(keys: TransactionKeys, cookieName: String) -> String {
        var object: JSONObject = [
            "r": .string(realm), "a": .string(alias), "i": .string(issuer), "s": .string(state), "n": .string(nonce),
            "v": .string(codeVerifier), "t": .number(startedAt.timeIntervalSince1970.rounded(.down)),
        ]
        if let returnTo { object["ret"] = .string(returnTo) }
        if reauthenticate { object["re"] = .bool(true) }
        if let linkUserId { object["lk"] = .string(linkUserId) }
        let (id, key) = keys.current
        // Sealing with a fresh random nonce cannot fail for a 256-bit key.
        let box = try! AES.GCM.seal(StrictJSON.serialize(object), using: key, authenticating: Array((Self.marker + id + cookieName).utf8))
        return Self.marker + id + "." + Base64URL.encode(box.combined!)
    }

    /// The transaction in a cookie value, when it opens under a known key for this cookie name and has not expired.
    static func open(_ value: String, keys: TransactionKeys, cookieName: String, now: Date) throws(SignInFailure) -> SignInTransaction {
        guard value.utf8.count <= 4096, value.hasPrefix(marker) else { throw SignInFailure(.transactionInvalid, "the sign-in cookie is not one Keyward wrote") }
        let rest = value.dropFirst(marker.count)
        guard let dot = rest.firstIndex(of: "."), let key = keys.accepted[String(rest[..<dot])],
            let sealed = try? Base64URL.decode(String(rest[rest.index(after: dot)...])),
            let box = try? AES.GCM.SealedBox(combined: sealed),
            let json = try? AES.GCM.open(box, using: key, authenticating: Array((marker + rest[..<dot] + cookieName).utf8)),
            let object = try? StrictJSON.parseObject(Array(json)),
            let realm = object.string("r"), let alias = object.string("a"), let issuer = object.string("i"), let state = object.string("s"),
            let nonce = object.string("n"), let verifier = object.string("v"), let seconds = object["t"]?.numberValue
        else { throw SignInFailure(.transactionInvalid, "the sign-in cookie does not open: it was changed, or written under a retired key") }
        let startedAt = Date(timeIntervalSince1970: seconds)
        guard startedAt <= now.addingTimeInterval(60), now.timeIntervalSince(startedAt) <= lifetime else {
            throw SignInFailure(.transactionExpired, "the sign-in began more than \(Int(lifetime / 60)) minutes ago; start again")
        }
        return SignInTransaction(
            realm: realm, alias: alias, issuer: issuer, state: state, nonce: nonce, codeVerifier: verifier, returnTo: object.string("ret"),
            startedAt: startedAt, reauthenticate: object["re"]?.boolValue == true, linkUserId: object.string("lk")
        )
    }
}

/// The keys sign-in cookies are sealed under, derived from the master key by id: `current` seals, every key in
/// `accepted` opens. Rotating means adding an id here and making it current; the previous id stays accepted for
/// one transaction lifetime.
struct TransactionKeys: Sendable {
    let current: (id: String, key: SymmetricKey)
    let accepted: [String: SymmetricKey]

    static let ids = ["1"]

    init(masterKey: MasterKey) {
        let keys = Dictionary(uniqueKeysWithValues: Self.ids.map { ($0, masterKey.derivedKey(purpose: "keyward sign-in transaction \($0)")) })
        current = (Self.ids.last!, keys[Self.ids.last!]!)
        accepted = keys
    }
}
