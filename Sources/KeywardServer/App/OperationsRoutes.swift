import Hummingbird
import KeywardWire

/// Un-prefixed operational endpoints: liveness, readiness (database reachable) and Prometheus metrics.
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
    }
}
