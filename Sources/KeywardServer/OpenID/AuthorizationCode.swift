// The authorization code: what the person granted, sealed into the code itself, spent once at the token endpoint.
import Foundation
import KeywardJOSE

/// What an authorization code grants, sealed into the code (`SealedJSON`) so no row is written for it: the code is
/// ≥ 128 bits of randomness (its `id` and the seal's nonce) that only this server can read or forge. It is spent
/// once in Core's single-use records (scope `authorization-code:{realm}`, key `id`); a second redemption finds it
/// spent and revokes the refresh-token family the first one started, whose id is the code's (RFC 9700 §4.2.4).
struct AuthorizationCode: Sendable, Equatable {
    /// RFC 9700 §4.2.1 asks for a short life; OAuth 2.1 suggests at most 10 minutes, an app redeems in seconds.
    static let lifetime: TimeInterval = 60

    /// 128 random bits, base64url: the single-use key and the refresh-token family's id.
    var id: String
    var clientId: String
    var redirectURI: String
    var userId: String
    /// The browser session it came from (`BrowserSession.idHash`): the family belongs to it.
    var sessionId: String
    var scope: String
    var nonce: String?
    var codeChallenge: String
    var dpopJKT: String?
    var authTime: Date
    var amr: [String]
    var acr: String
    var expiresAt: Date

    var json: JSONObject {
        var object: JSONObject = [
            "id": .string(id), "cid": .string(clientId), "ru": .string(redirectURI), "sub": .string(userId), "sid": .string(sessionId),
            "sc": .string(scope), "cc": .string(codeChallenge), "at": .number(authTime.timeIntervalSince1970.rounded(.down)),
            "amr": .array(amr.map { .string($0) }), "acr": .string(acr), "exp": .number(expiresAt.timeIntervalSince1970.rounded(.down)),
        ]
        if let nonce { object["n"] = .string(nonce) }
        if let dpopJKT { object["jkt"] = .string(dpopJKT) }
        return object
    }

    init(
        id: String = Base64URL.encode(SecureRandom.bytes(16)), clientId: String, redirectURI: String, userId: String, sessionId: String,
        scope: String, nonce: String?, codeChallenge: String, dpopJKT: String?, authTime: Date, amr: [String], acr: String, expiresAt: Date
    ) {
        (self.id, self.clientId, self.redirectURI, self.userId, self.sessionId) = (id, clientId, redirectURI, userId, sessionId)
        (self.scope, self.nonce, self.codeChallenge, self.dpopJKT) = (scope, nonce, codeChallenge, dpopJKT)
        (self.authTime, self.amr, self.acr, self.expiresAt) = (authTime, amr, acr, expiresAt)
    }

    init?(json object: JSONObject) {
        guard let id = object["id"]?.stringValue, let clientId = object["cid"]?.stringValue, let redirectURI = object["ru"]?.stringValue,
            let userId = object["sub"]?.stringValue, let sessionId = object["sid"]?.stringValue, let scope = object["sc"]?.stringValue,
            let codeChallenge = object["cc"]?.stringValue, let authTime = object["at"]?.numberValue,
            let amr = object["amr"]?.arrayValue?.compactMap(\.stringValue), let acr = object["acr"]?.stringValue,
            let expiresAt = object["exp"]?.numberValue
        else { return nil }
        self.init(
            id: id, clientId: clientId, redirectURI: redirectURI, userId: userId, sessionId: sessionId, scope: scope,
            nonce: object["n"]?.stringValue, codeChallenge: codeChallenge, dpopJKT: object["jkt"]?.stringValue,
            authTime: Date(timeIntervalSince1970: authTime), amr: amr, acr: acr, expiresAt: Date(timeIntervalSince1970: expiresAt)
        )
    }
}

/// The authentication context class a sign-in reached (OpenID Connect Core §2 `acr`): Keyward's two levels.
enum AuthenticationLevel {
    /// A second factor ran after the first: `acr_values=urn:keyward:acr:mfa` asks for it.
    static let multiFactor = "urn:keyward:acr:mfa"
    /// One factor: a password, an identity provider, or a passkey without user verification.
    static let singleFactor = "urn:keyward:acr:1fa"

    /// The level the session's `amr` shows: two methods are two factors (`pwd` then `mfa`, `fed` then `hwk`, a
    /// passkey's `hwk` with the authenticator's `user`); one alone is one.
    static func of(amr: [String]) -> String {
        Set(amr).count >= 2 ? multiFactor : singleFactor
    }
}
