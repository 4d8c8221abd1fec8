// 405 with `Allow` for a path Keyward serves under other methods, instead of the router's 404.
import HTTPTypes
import Hummingbird

/// Added to the router after every route, so it wraps only the router's not-found answer: when the path matches a
/// route under another method, the answer is 405 Method Not Allowed naming the methods in `Allow` (RFC 9110 §15.5.6).
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Route paths as segments (a parameter, "{name}" or ":name", matches any one segment), with their methods.
    private let routes: [(segments: [Substring], methods: [String])]

    init(routes: [(path: String, method: HTTPRequest.Method)]) {
        var methods: [String: Set<String>] = [:]
        for route in routes { methods[route.path, default: []].insert(route.method.rawValue) }
        self.routes = methods.map { path, methods in
            (path.split(separator: "/"), methods.sorted())
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let allowed = allowedMethods(request.uri.path)
            guard !allowed.isEmpty else { throw error }
            let message = "\(request.method.rawValue.prefix(16)) is not allowed here; use \(allowed.joined(separator: " or "))"
            return JSONResponse.error(.methodNotAllowed, message, status: .methodNotAllowed, requestId: context.id, headers: [.allow: allowed.joined(separator: ", ")])
        }
    }

    private func allowedMethods(_ path: String) -> [String] {
        let segments = path.split(separator: "/")
        var allowed: Set<String> = []
        for route in routes where route.segments.count == segments.count {
            if zip(route.segments, segments).allSatisfy({ pattern, segment in pattern.hasPrefix("{") || pattern.hasPrefix(":") || pattern == segment }) {
                allowed.formUnion(route.methods)
            }
        }
        return allowed.sorted()
    }
}
