// What a browser holds before its password is verified, carried in a signed cookie instead of a row.
import Crypto
import Foundation
import KeywardJOSE

/// What a browser holds before its password is verified, carried in its session cookie instead of a database
/// row: loading the sign-in page without a cookie must write nothing, or anyone could fill the session table.
///
/// The cookie value is `p1.` + base64url(JSON) + `.` + base64url(HMAC-SHA-256) under a key derived from the
/// master key, so every node reads what another wrote. Session ids are 43 base64url characters without dots,
/// so the two kinds of cookie value cannot be confused. The form's CSRF token is an HMAC of the state's nonce:
/// a page from this cookie, and only from it, carries a token that matches.
struct PreLoginState: Sendable, Equatable {
    var realm: String
    var nonce: String
    var issuedAt: Date
    var returnTo: String?
    var clientId: String?

    static let marker = "p1."
    /// HKDF `info` of the signing key.
    static let keyPurpose = "keyward pre-login state v1"
    /// A sign-in page left open longer than a session's idle lifetime has expired, as a session would have.
    static let lifetime = BrowserSessionService.idleLifetime

    static func isPreLoginValue(_ cookie: String) -> Bool { cookie.hasPrefix(marker) }

    func cookieValue(key: SymmetricKey) -> String {
        var object: JSONObject = ["r": .string(realm), "n": .string(nonce), "t": .number(issuedAt.timeIntervalSince1970.rounded(.down))]
        if let returnTo { object["ret"] = .string(returnTo) }
        if let clientId { object["cid"] = .string(clientId) }
        let payload = Self.marker + Base64URL.encode(StrictJSON.serialize(object))
        return payload + "." + Base64URL.encode(Self.mac(Array(payload.utf8), key: key))
    }

    /// The state a cookie value holds, when its signature verifies, it is for `realm`, and it has not expired.
    init?(cookie: String, realm: String, key: SymmetricKey, now: Date) {
        guard cookie.utf8.count <= 2048, Self.isPreLoginValue(cookie), let dot = cookie.lastIndex(of: ".") else { return nil }
        let payload = cookie[..<dot]
        guard let signature = try? Base64URL.decode(String(cookie[cookie.index(after: dot)...])),
            HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: Array(payload.utf8), using: key),
            let json = try? Base64URL.decode(String(payload.dropFirst(Self.marker.count))),
            let object = try? StrictJSON.parseObject(json),
            let stateRealm = object["r"]?.stringValue, stateRealm == realm,
            let nonce = object["n"]?.stringValue, let seconds = object["t"]?.numberValue
        else { return nil }
        let issuedAt = Date(timeIntervalSince1970: seconds)
        guard issuedAt <= now.addingTimeInterval(60), now.timeIntervalSince(issuedAt) < Self.lifetime else { return nil }
        self.init(realm: realm, nonce: nonce, issuedAt: issuedAt, returnTo: object["ret"]?.stringValue, clientId: object["cid"]?.stringValue)
    }

    init(realm: String, nonce: String = Base64URL.encode(SecureRandom.bytes(16)), issuedAt: Date, returnTo: String?, clientId: String?) {
        self.realm = realm
        self.nonce = nonce
        self.issuedAt = issuedAt
        self.returnTo = returnTo
        self.clientId = clientId
    }

    func csrfToken(key: SymmetricKey) -> String {
        Base64URL.encode(Self.mac(Array(("csrf:" + nonce).utf8), key: key))
    }

    func csrfMatches(_ submitted: String?, key: SymmetricKey) -> Bool {
        guard let submitted, let given = try? Base64URL.decode(submitted) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(given, authenticating: Array(("csrf:" + nonce).utf8), using: key)
    }

    private static func mac(_ bytes: [UInt8], key: SymmetricKey) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: bytes, using: key))
    }
}
