// What every page route needs from a browser request: session cookie, forms, CSRF, safe return paths.
import Foundation
import HTTPTypes
import Hummingbird
import KeywardHTTPInput

/// What every page route needs: the session cookie, form bodies, CSRF, same-origin return paths.
struct BrowserRequests: Sendable {
    let sessions: BrowserSessionService
    let secureCookies: Bool
    let maxBodySize: Int
    let clients: ClientNetworks
    /// Read for the sign-in's continuations (`formTargets`), plugged in after this is built.
    let plugins: AccountPlugins

    /// `__Host-` pins the cookie to this origin, but browsers accept it only with `Secure`, i.e. over https.
    var cookieName: String { secureCookies ? "__Host-keyward-session" : "keyward-session" }

    func cookieValue(_ request: Request) -> String? {
        Self.cookie(named: cookieName, in: request)
    }

    /// The value of the request's cookie `name`, if it sent one.
    static func cookie(named name: String, in request: Request) -> String? {
        var found: String?
        eachCookie(in: request) { cookieName, value in
            guard cookieName.elementsEqual(name.utf8) else { return true }
            found = String(decoding: value, as: UTF8.self)
            return false
        }
        return found
    }

    /// Every cookie the request carries, in order.
    static func cookies(in request: Request) -> [(name: String, value: String)] {
        var all: [(name: String, value: String)] = []
        eachCookie(in: request) { name, value in
            all.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
            return true
        }
        return all
    }

    /// Calls `body` with each `name=value` pair of the Cookie headers (RFC 6265 §5.4: pairs split by ";", space and
    /// tab trimmed), as bytes, until it returns false. Every page request reads cookies, so no Foundation here.
    private static func eachCookie(in request: Request, _ body: (ArraySlice<UInt8>, ArraySlice<UInt8>) -> Bool) {
        func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
            var slice = bytes
            while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
            while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
            return slice
        }
        for header in request.headers[values: .cookie] {
            let bytes = Array(header.utf8)
            for pair in bytes.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: true) {
                guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { continue }
                let (name, value) = (trimmed(pair[..<equals]), trimmed(pair[(equals + 1)...]))
                guard !name.isEmpty, !value.isEmpty else { continue }
                if !body(name, value) { return }
            }
        }
    }

    func session(_ request: Request, realm: String) async throws -> BrowserSession? {
        guard let cookie = cookieValue(request) else { return nil }
        return try await sessions.session(cookie: cookie, realm: realm)
    }

    /// The browser's session in `realm` once it has finished signing in (every step of the login flow), with its
    /// user's id; nil for no session or one still on its way in.
    func signedIn(_ request: Request, realm: String) async throws -> (session: BrowserSession, userId: String)? {
        guard let session = try await session(request, realm: realm), session.stage == .authenticated, let userId = session.userId else { return nil }
        return (session, userId)
    }

    /// The signed pre-login state the cookie carries for `realm`, when it is one and still valid.
    func preLogin(_ request: Request, realm: String) -> PreLoginState? {
        guard let cookie = cookieValue(request) else { return nil }
        return sessions.preLogin(cookie: cookie, realm: realm)
    }

    /// Who sent the request (`ClientNetworks`), for per-client limits.
    func clientAddress(_ request: Request, _ context: KeywardRequestContext) -> String {
        clients.client(request, context)
    }

    func setCookie(_ value: String) -> HTTPFields {
        [.setCookie: "\(cookieName)=\(value); Path=/; HttpOnly; SameSite=Lax\(secureCookies ? "; Secure" : "")"]
    }

    var clearCookie: HTTPFields {
        [.setCookie: "\(cookieName)=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax\(secureCookies ? "; Secure" : "")"]
    }

    /// The CSP `form-action` sources a sign-in page must admit beside its own origin: where a sign-in returning to
    /// `returnTo` continues once it completes (`SignInContinuation`).
    func formTargets(_ request: Request, realm: String, returnTo: String?) -> [String] {
        guard let returnTo else { return [] }
        return plugins.continuations.flatMap { $0.formTargets(realm: realm, returnTo: returnTo, request: request) }
    }

    /// The form fields of a POST; repeated or malformed fields make the request invalid.
    func form(_ request: Request) async throws -> [String: String]? {
        let body = try await request.body.collect(upTo: maxBodySize)
        return try? FormBody.parse(body.readableBytesView)
    }

    /// A same-origin path (`/…`, not `//…` or `/\…`) or nil: never an open redirect.
    static func safeReturnPath(_ value: String?) -> String? {
        guard let value, value.utf8.count <= 512, value.hasPrefix("/"), !value.hasPrefix("//"), !value.hasPrefix("/\\"),
            !value.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) || $0 == "\\" })
        else { return nil }
        return value
    }
}
