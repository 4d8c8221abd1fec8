// Rendering server-side pages, redirects and error pages with the security headers every page carries.
import Foundation
import HTTPTypes
import Hummingbird
import KeywardJOSE
import Mustache
import NIOCore

/// Renders server-side pages with the security headers every page carries: a strict CSP whose nonce admits only
/// Keyward's own stylesheet and script, no framing, no sniffing, no referrer, no caching.
struct PageRenderer: Sendable {
    let library: MustacheLibrary

    init() throws {
        MustacheContentTypes.register(HTMLText.ContentType(), named: HTMLText.ContentType.name)
        var library = MustacheLibrary()
        for (name, source) in PageTemplates.all { try library.register(HTMLText.ContentType.pragma + source, named: name) }
        self.library = library
    }

    /// `context` values are escaped by the templates (`{{…}}`) through `HTMLText`; only `body` and `qrSVG` are
    /// inserted raw. `formTargets`: CSP sources the page's forms may end at through redirects, beside its own origin
    /// (an app's redirect URI after a sign-in or a consent).
    func page(
        _ template: String, title: String, realm: String, context: [String: Any], status: HTTPResponse.Status = .ok,
        refreshSeconds: Int? = nil, headers extra: HTTPFields = [:], formTargets: [String] = []
    ) -> Response {
        let nonce = Self.nonce()
        let body = library.render(context, withTemplate: template) ?? ""
        var layout: [String: Any] = ["title": title, "realmName": realm, "nonce": nonce, "body": body]
        if let refreshSeconds { layout["refreshSeconds"] = refreshSeconds }
        let html = library.render(layout, withTemplate: "layout") ?? ""
        var headers = Self.securityHeaders(nonce: nonce, formTargets: formTargets)
        headers[.contentType] = "text/html; charset=utf-8"
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    func redirect(to location: String, headers extra: HTTPFields = [:]) -> Response {
        var headers: HTTPFields = [.location: location, .cacheControl: "no-store"]
        headers.append(contentsOf: extra)
        return Response(status: .seeOther, headers: headers)
    }

    static func securityHeaders(nonce: String, formTargets: [String] = []) -> HTTPFields {
        let formAction = (["'self'"] + formTargets).joined(separator: " ")
        return [
            .contentSecurityPolicy: "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'nonce-\(nonce)'; img-src 'self' data:; connect-src 'self'; form-action \(formAction); frame-ancestors 'none'; base-uri 'none'",
            .init("X-Content-Type-Options")!: "nosniff",
            .init("X-Frame-Options")!: "DENY",
            .init("Referrer-Policy")!: "no-referrer",
            .cacheControl: "no-store",
        ]
    }

    /// A refusal or failure as a page: what the person is told and the request id support needs. `realm` is the
    /// path's realm parameter, shown only when it is a valid realm name.
    func errorPage(
        heading: String, text: String, status: HTTPResponse.Status, realm: String?, requestId: String, headers: HTTPFields = [:]
    ) -> Response {
        let shownRealm = realm.flatMap { RealmName.isValid($0) ? $0 : nil } ?? "unknown realm"
        return page("message", title: heading, realm: shownRealm, context: [
            "heading": heading, "text": text, "isError": true, "requestId": requestId,
        ], status: status, headers: headers)
    }

    /// A form whose CSRF token does not match (open too long, or sent from elsewhere): 403 and one way on, back to
    /// the account page or to sign in.
    func formExpired(realm: String, backToAccount: Bool) -> Response {
        page("message", title: "Form expired", realm: realm, context: [
            "heading": "This form has expired", "text": "The page was open too long or came from elsewhere. Please start again.", "isError": true,
            "link": backToAccount
                ? ["href": PageURLs.account(realm), "label": "Back to your account"] : ["href": PageURLs.login(realm), "label": "Sign in"],
        ], status: .forbidden)
    }

    /// What needs a recent sign-in (`BrowserSession.recentSignIn`) from a session that is older: sign in again, then
    /// back to the account page.
    func signInAgain(_ realm: String, then returnTo: String? = nil) -> Response {
        redirect(to: PageURLs.login(realm) + "?reauth=1&return_to=" + (returnTo ?? PageURLs.account(realm)))
    }

    private static func nonce() -> String {
        Data(SecureRandom.bytes(16)).base64EncodedString()
    }

    static func scriptResponse() -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "text/javascript; charset=utf-8", .cacheControl: "public, max-age=3600", .init("X-Content-Type-Options")!: "nosniff"],
            body: .init(byteBuffer: ByteBuffer(string: StaticScript.source))
        )
    }
}
