// The operational endpoints: liveness, readiness, Prometheus metrics and the OpenAPI document.
import HTTPTypes
import Hummingbird
import KeywardWire

/// Un-prefixed operational endpoints: liveness, readiness (database reachable), Prometheus metrics and the
/// OpenAPI document.
struct OperationsRoutes {
    let metrics: KeywardMetrics
    let checkDatabase: @Sendable () async throws -> Void

    func register(on router: Router<KeywardRequestContext>) {
        router.get("/healthz") { _, _ in JSONResponse.make(["status": "ok"]) }
        router.get("/readyz") { _, context in
            do {
                try await checkDatabase()
                return JSONResponse.make(["status": "ready"])
            } catch {
                context.logger.warning("readiness check failed", metadata: ["error": "\(error)"])
                return JSONResponse.error(.unavailable, "database unreachable", status: .serviceUnavailable, requestId: context.id)
            }
        }
        router.get("/metrics") { _, _ in
            JSONResponse.make(bytes: Array(metrics.render().utf8), contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
        router.get("/openapi.json") { _, _ in
            JSONResponse.make(bytes: try OpenAPIDocument.json.get(), headers: Self.documentCaching)
        }
        router.get("/openapi.yaml") { _, _ in
            JSONResponse.make(bytes: OpenAPIDocument.yaml, headers: Self.documentCaching, contentType: "application/yaml; charset=utf-8")
        }
    }

    /// The document changes only with the binary.
    private static let documentCaching: HTTPFields = [.cacheControl: "public, max-age=3600"]
}
