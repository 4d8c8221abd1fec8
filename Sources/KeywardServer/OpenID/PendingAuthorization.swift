// An authorization request checked against its client, held by the browser while the person signs in and consents.
import Foundation
import KeywardHTTPInput
import KeywardJOSE

/// An authorization request whose client and redirect URI checked out: what the endpoint carries through the
/// sign-in and the consent page. The browser holds it sealed (`SealedJSON`) in a cookie of its own, named by `id`,
/// so a request that is only looked at writes no row, and two requests in one browser do not overwrite each other.
struct PendingAuthorization: Sendable, Equatable {
    /// Random, names the cookie and the resume URL.
    var id: String
    var clientId: String
    /// As the request sent it (a loopback URI with the app's port), where the answer goes.
    var redirectURI: String
    var scopes: [String]
    var state: String?
    var nonce: String?
    var codeChallenge: String
    var prompt: AuthorizationRequest.Prompt?
    var loginHint: String?
    var identityProviderHint: String?
    var dpopJKT: String?
    var maxAge: Int?
    var acrValues: [String]
    /// When the request arrived, to the millisecond: only a sign-in after it satisfies `prompt=login` (one earlier in
    /// the same second must not).
    var createdAt: Date
    /// The browser was sent to sign in for this request.
    var signInStarted = false
    /// The browser's session (`BrowserSession.idHash`, "" for none) when it was sent to sign in: every sign-in gives the
    /// session a new id, so a different one now means the person signed in for this request, however close the clock.
    var sessionBeforeSignIn: String?
    /// The signed-in session was sent to its second factor for `acr_values=urn:keyward:acr:mfa`; once back, the
    /// request goes on with what the session reached.
    var stepUpStarted = false
    /// Set for a request of the broker's relay (`RelayAuthorization`): it ends in a hand-off for this key, not a code.
    var relay: Relay?

    /// What a relay request carries besides its client and return address.
    struct Relay: Sendable, Equatable {
        /// The app's session key, a public JWK as compact JSON.
        var sessionKey: String
        /// The app's nonce, given back beside the code.
        var nonce: String
        /// How long the delegation lasts, in days, read once when the request arrived: what the consent page says is
        /// what is issued, whatever the realm's setting becomes meanwhile.
        var days: Int
    }

    /// How long a browser may take to sign in and consent: the session's own pre-login limit is longer, but a
    /// request older than this is stale for the app waiting on it.
    static let lifetime: TimeInterval = 1800

    init(_ request: AuthorizationRequest, scopes: [String], now: Date) {
        id = Base64URL.encode(SecureRandom.bytes(16))
        clientId = request.clientId
        redirectURI = request.redirectURI
        self.scopes = scopes
        state = request.state
        nonce = request.nonce
        codeChallenge = request.codeChallenge
        prompt = request.prompt
        loginHint = request.loginHint
        identityProviderHint = request.identityProviderHint
        dpopJKT = request.dpopJKT
        maxAge = request.maxAge
        acrValues = request.acrValues
        createdAt = Date(timeIntervalSince1970: (now.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }

    /// A relay request for `clientId`, returning to `returnURL` (registered), once it has been checked.
    init(relayFor clientId: String, returnURL: String, relay: Relay, now: Date) {
        id = Base64URL.encode(SecureRandom.bytes(16))
        self.clientId = clientId
        redirectURI = returnURL
        scopes = []
        codeChallenge = ""
        acrValues = []
        self.relay = relay
        createdAt = Date(timeIntervalSince1970: (now.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }

    var json: JSONObject {
        var object: JSONObject = [
            "id": .string(id), "cid": .string(clientId), "ru": .string(redirectURI), "sc": .array(scopes.map { .string($0) }),
            "cc": .string(codeChallenge), "t": .number(createdAt.timeIntervalSince1970), "acr": .array(acrValues.map { .string($0) }),
        ]
        if let state { object["st"] = .string(state) }
        if let nonce { object["n"] = .string(nonce) }
        if let prompt { object["p"] = .string(prompt.rawValue) }
        if let loginHint { object["lh"] = .string(loginHint) }
        if let identityProviderHint { object["idp"] = .string(identityProviderHint) }
        if let dpopJKT { object["jkt"] = .string(dpopJKT) }
        if let maxAge { object["ma"] = .number(Double(maxAge)) }
        if signInStarted { object["si"] = .bool(true) }
        if let sessionBeforeSignIn { object["sb"] = .string(sessionBeforeSignIn) }
        if stepUpStarted { object["su"] = .bool(true) }
        if let relay {
            object["rk"] = .string(relay.sessionKey)
            object["rn"] = .string(relay.nonce)
            object["rd"] = .number(Double(relay.days))
        }
        return object
    }

    /// What `json` wrote; nil for anything else (the value was sealed by this server, so only a change of format
    /// between versions could make it differ).
    init?(json object: JSONObject) {
        guard let id = object["id"]?.stringValue, let clientId = object["cid"]?.stringValue, let redirectURI = object["ru"]?.stringValue,
            let scopes = object["sc"]?.arrayValue?.compactMap(\.stringValue), let codeChallenge = object["cc"]?.stringValue,
            let seconds = object["t"]?.numberValue, let acr = object["acr"]?.arrayValue?.compactMap(\.stringValue)
        else { return nil }
        (self.id, self.clientId, self.redirectURI, self.scopes, self.codeChallenge) = (id, clientId, redirectURI, scopes, codeChallenge)
        createdAt = Date(timeIntervalSince1970: seconds)
        acrValues = acr
        state = object["st"]?.stringValue
        nonce = object["n"]?.stringValue
        prompt = object["p"]?.stringValue.flatMap(AuthorizationRequest.Prompt.init(rawValue:))
        loginHint = object["lh"]?.stringValue
        identityProviderHint = object["idp"]?.stringValue
        dpopJKT = object["jkt"]?.stringValue
        maxAge = object["ma"]?.intValue.map(Int.init)
        signInStarted = object["si"] == .bool(true)
        sessionBeforeSignIn = object["sb"]?.stringValue
        stepUpStarted = object["su"] == .bool(true)
        if let sessionKey = object["rk"]?.stringValue, let nonce = object["rn"]?.stringValue, let days = object["rd"]?.intValue {
            relay = Relay(sessionKey: sessionKey, nonce: nonce, days: Int(days))
        }
    }

    /// `acr_values` asks for a second factor.
    var wantsMultiFactor: Bool { acrValues.contains(AuthenticationLevel.multiFactor) }

    /// `prompt=none`: no page may be shown (spelled out: `.none` would be read as a nil prompt).
    var isSilent: Bool { prompt == AuthorizationRequest.Prompt.none }

    func isExpired(now: Date) -> Bool { now.timeIntervalSince(createdAt) > Self.lifetime || createdAt > now.addingTimeInterval(60) }
}
