// Per request: the request id, the security headers, one access-log line and the route's metrics.
import Hummingbird
import Logging

/// Per request: an `X-Request-Id` header, the security headers every answer carries, one access-log line,
/// and the request count / latency metrics labelled by route pattern (never the raw path, to bound cardinality).
struct ObservabilityMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: KeywardMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        var response = try await next(request, context)
        let route = context.endpointPath ?? "unmatched"
        response.headers[.init("X-Request-Id")!] = context.id
        response.headers[.init("X-Content-Type-Options")!] = "nosniff"
        response.headers[.init("Referrer-Policy")!] = "no-referrer"
        if response.headers[.contentSecurityPolicy] == nil {
            response.headers[.contentSecurityPolicy] = "default-src 'none'; frame-ancestors 'none'"
        }
        let elapsed = ContinuousClock.now - started
        metrics.requestCompleted(route: route, method: request.method, status: response.status.code, duration: elapsed)
        context.logger.info(
            "request",
            metadata: [
                "method": "\(request.method.rawValue)",
                "route": "\(route)",
                "status": "\(response.status.code)",
                "duration_ms": "\(Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15)",
            ]
        )
        return response
    }
}
