// Re-posting a cross-site form_post callback from Keyward's own page so its sign-in cookie comes along.
import HTTPTypes
import Hummingbird
import KeywardJOSE
import NIOCore

/// The hop that lets a `form_post` callback (Sign in with Apple) find its transaction cookie.
///
/// The provider's page POSTs the answer to Keyward from the provider's origin: a cross-site POST, on which browsers
/// do not send SameSite=Lax cookies, so the sign-in cookie is missing. Loosening the cookie to SameSite=None would
/// hand it to every cross-site request; instead, a POST callback that arrives without the cookie of its `state`
/// is answered with this small page of Keyward's own, which POSTs the same fields to the same URL. That second POST
/// starts on Keyward's origin, is same-site, and carries the Lax cookie.
///
/// It cannot loop: the page adds `repostMarker`, and a POST bearing it is always handled as a callback, so one
/// that still lacks the cookie (another browser, an expired flow) ends as `transaction_missing`. Only the
/// callback's known fields are carried, escaped; the inline script runs under the response's CSP nonce, and a
/// button does the same without JavaScript.
enum ProviderCallbackRepost {
    static let repostMarker = "keyward_reposted"
    /// What a provider's form_post carries (OAuth, OIDC, RFC 9207, Apple's `user`); anything else is not re-sent.
    static let carriedFields = ["state", "code", "id_token", "user", "error", "error_description", "iss"]

    /// True when this POST should be re-posted rather than handled: it has not been re-posted yet and lacks the
    /// transaction cookie its state names.
    static func needsRepost(form: [String: String], request: Request, secureCookies: Bool) -> Bool {
        guard form[repostMarker] == nil, let state = form["state"], (1...512).contains(state.utf8.count) else { return false }
        return BrowserRequests.cookie(named: SignInTransaction.cookieName(state: state, secure: secureCookies), in: request) == nil
    }

    static func page(action: String, form: [String: String]) -> Response {
        let nonce = Base64URL.encode(SecureRandom.bytes(16))
        var inputs = ""
        for name in carriedFields {
            guard let value = form[name] else { continue }
            inputs += "<input type=\"hidden\" name=\"\(name)\" value=\"\(HTMLText.escaped(value))\">\n"
        }
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Continuing sign-in</title></head>
            <body><main>
            <form id="keyward-repost" method="post" action="\(HTMLText.escaped(action))">
            \(inputs)<input type="hidden" name="\(repostMarker)" value="1">
            <p>Finishing your sign-in…</p>
            <button type="submit">Continue</button>
            </form></main>
            <script nonce="\(nonce)">document.getElementById("keyward-repost").submit();</script>
            </body></html>
            """
        var headers = PageRenderer.securityHeaders(nonce: nonce)
        headers[.contentType] = "text/html; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
