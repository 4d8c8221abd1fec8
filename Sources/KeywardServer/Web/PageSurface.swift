// What a part registers its pages with: the page route group, the renderer and the browser helpers.
import Hummingbird

/// What a part registers its pages with: the page group (errors answered as HTML pages with the request id, where
/// the JSON APIs keep `ErrorMiddleware`'s bodies; the realm of every page's `/realms/{realm}` path resolved in
/// front, read as `context.realm`), the renderer and the browser helpers (session cookie, forms, CSRF, client address).
struct PageSurface: Sendable {
    let pages: RouterGroup<KeywardRequestContext>
    let renderer: PageRenderer
    let browser: BrowserRequests
}
