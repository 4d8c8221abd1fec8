import Foundation
import HTTPTypes
import Hummingbird
import KeywardHTTPInput

/// What every page route needs: the session cookie, form bodies, CSRF, same-origin return paths.
struct BrowserRequests: Sendable {
    let sessions: BrowserSessionService
    let secureCookies: Bool
    let maxBodySize: Int
    let trustedProxies: TrustedProxies

    /// `__Host-` pins the cookie to this origin, but browsers accept it only with `Secure`, i.e. over https.
    var cookieName: String { secureCookies ? "__Host-keyward-session" : "keyward-session" }

    func cookieValue(_ request: Request) -> String? {
        Self.cookie(named: cookieName, in: request)
    }

    /// The value of the request's cookie `name`, if it sent one.
    static func cookie(named name: String, in request: Request) -> String? {
        cookies(in: request).first { $0.name == name }?.value
    }

    /// Every cookie the request carries, in order.
    static func cookies(in request: Request) -> [(name: String, value: String)] {
        request.headers[values: .cookie].flatMap { header in
            header.split(separator: ";").compactMap { pair -> (name: String, value: String)? in
                let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                return parts.count == 2 ? (parts[0], parts[1]) : nil
            }
        }
    }

    func session(_ request: Request, realm: String) async throws -> BrowserSession? {
        guard let cookie = cookieValue(request) else { return nil }
        return try await sessions.session(cookie: cookie, realm: realm)
    }

    /// The signed pre-login state the cookie carries for `realm`, when it is one and still valid.
    func preLogin(_ request: Request, realm: String) -> PreLoginState? {
        guard let cookie = cookieValue(request) else { return nil }
        return sessions.preLogin(cookie: cookie, realm: realm)
    }

    /// Who sent the request (`ClientAddress`), for per-client limits.
    func clientAddress(_ request: Request, _ context: KeywardRequestContext) -> String {
        ClientAddress.resolve(peer: context.remoteAddress, headers: request.headers, trusted: trustedProxies)
    }

    func setCookie(_ value: String) -> HTTPFields {
        [.setCookie: "\(cookieName)=\(value); Path=/; HttpOnly; SameSite=Lax\(secureCookies ? "; Secure" : "")"]
    }

    var clearCookie: HTTPFields {
        [.setCookie: "\(cookieName)=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax\(secureCookies ? "; Secure" : "")"]
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
