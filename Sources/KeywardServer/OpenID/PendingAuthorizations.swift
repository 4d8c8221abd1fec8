// Where the browser holds its pending authorization requests: one sealed cookie each, scoped to the realm's paths.
import Foundation
import HTTPTypes
import Hummingbird
import KeywardHTTPInput
import KeywardJOSE

/// The browser's pending authorization requests, each in a cookie of its own (`keyward-authz-{id}`), sealed
/// (`SealedJSON`), scoped to `/realms/{realm}/` and kept `PendingAuthorization.lifetime`. The realm's sign-in
/// pages read it too: as a `SignInContinuation`, it tells them where a sign-in for the request will end, for their
/// CSP `form-action`.
struct PendingAuthorizations: SignInContinuation {
    static let purpose = "keyward pending authorization v1"
    static let cookiePrefix = "keyward-authz-"

    let sealed: SealedJSON
    let secureCookies: Bool
    let clock: any KeywardClock

    static func resumePath(realm: String, id: String) -> String {
        "/realms/\(realm)/protocol/openid-connect/auth/resume?id=\(id)"
    }

    /// The request `id` the browser holds for `realm`, while it is fresh.
    func read(_ request: Request, realm: String, id: String) -> PendingAuthorization? {
        guard Self.isId(id), let value = BrowserRequests.cookie(named: Self.cookiePrefix + id, in: request),
            let held = sealed.open(value, realm: realm).flatMap(PendingAuthorization.init(json:)), held.id == id, !held.isExpired(now: clock.now())
        else { return nil }
        return held
    }

    /// Browsers keep a cookie of at most 4,096 bytes, name and attributes included: a longer value would be dropped
    /// without a word and the sign-in would come back to an expired request.
    static let maxValueLength = 3800
    /// Requests held at once by one browser in one realm; the oldest give way, so a loop that opens the endpoint
    /// again and again cannot grow the browser's Cookie header past what servers accept.
    static let maxHeld = 4

    /// The cookie that holds `held`, and the removal of the oldest others `request` carries beyond `maxHeld`; nil
    /// when the request is too large to hold (`maxValueLength`).
    func keep(_ held: PendingAuthorization, realm: String, request: Request) -> HTTPFields? {
        let value = sealed.seal(held.json, realm: realm)
        guard value.utf8.count <= Self.maxValueLength else { return nil }
        var fields: HTTPFields = [.setCookie: cookie(held.id, realm: realm, value: value, maxAge: Int(PendingAuthorization.lifetime))]
        let others = BrowserRequests.cookies(in: request).compactMap { cookie -> (id: String, createdAt: Date)? in
            guard cookie.name.hasPrefix(Self.cookiePrefix) else { return nil }
            let id = String(cookie.name.dropFirst(Self.cookiePrefix.count))
            guard id != held.id, Self.isId(id) else { return nil }
            let createdAt = sealed.open(cookie.value, realm: realm).flatMap(PendingAuthorization.init(json:))?.createdAt
            return (id, createdAt ?? .distantPast)
        }
        for stale in others.sorted(by: { $0.createdAt > $1.createdAt }).dropFirst(Self.maxHeld - 1) {
            fields.append(HTTPField(name: .setCookie, value: cookie(stale.id, realm: realm, value: "", maxAge: 0)))
        }
        return fields
    }

    func clear(realm: String, id: String) -> HTTPFields {
        Self.isId(id) ? [.setCookie: cookie(id, realm: realm, value: "", maxAge: 0)] : [:]
    }

    private func cookie(_ id: String, realm: String, value: String, maxAge: Int) -> String {
        "\(Self.cookiePrefix)\(id)=\(value); Path=/realms/\(realm)/; Max-Age=\(maxAge); HttpOnly; SameSite=Lax\(secureCookies ? "; Secure" : "")"
    }

    /// 16 random bytes, base64url: what `PendingAuthorization` names itself by, and all a cookie name may carry here.
    static func isId(_ id: String) -> Bool {
        id.utf8.count == 22 && Base64URL.isAlphabet(id)
    }

    /// Where the app's answer goes, as a CSP source for a page whose form leads there.
    static func formTargets(_ held: PendingAuthorization) -> [String] {
        RedirectURI.formActionSource(of: held.redirectURI).map { [$0] } ?? []
    }

    func formTargets(realm: String, returnTo: String, request: Request) -> [String] {
        let prefix = "/realms/\(realm)/protocol/openid-connect/auth/resume?id="
        guard returnTo.hasPrefix(prefix), let held = read(request, realm: realm, id: String(returnTo.dropFirst(prefix.count))) else { return [] }
        return Self.formTargets(held)
    }
}
