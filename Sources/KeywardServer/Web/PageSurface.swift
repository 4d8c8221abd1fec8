// What a part registers its pages with: the page route group and the renderer.
import Hummingbird

/// What a part registers its pages with: the page group (errors answered as HTML pages with the request id, where
/// the JSON APIs keep `ErrorMiddleware`'s bodies; the realm of every page's `/realms/{realm}` path resolved in
/// front, read as `context.realm`) and the renderer. The browser helpers (session cookie, forms, CSRF) are
/// Accounts' (`BrowserRequests`), which owns the sessions they read.
/// A part adds its own middleware on a group of its own (`web.pages.group().add(middleware:)`), never on `pages`
/// itself: a group's middleware list is shared, so it would wrap every page registered after it, other parts' too.
struct PageSurface: Sendable {
    let pages: RouterGroup<KeywardRequestContext>
    let renderer: PageRenderer
}
