// In front of the device API: its error body, and the signed-request check that puts the device on the context.
import Hummingbird
import KeywardWire

extension Device: RequestCaller {}

/// The device API's refusals in its body (`APIErrorBody` with the request id, the failed check and the server's
/// time where they apply), the realm middleware's included; in front of `RealmResolution`.
struct DeviceErrorBodies: RouterMiddleware {
    func handle(
        _ request: Request, context: KeywardRequestContext, next: (Request, KeywardRequestContext) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as DeviceError {
            return Self.response(error, context)
        } catch let error as APIError where error.code == .realmNotFound {
            return Self.response(DeviceError(error.status, error.code, error.message), context)
        } catch let error as APIError where error.status == .serviceUnavailable {
            return Self.response(.unavailable, context)
        }
    }

    private static func response(_ error: DeviceError, _ context: KeywardRequestContext) -> Response {
        var headers = DeviceRoutes.noStore
        headers[.contentType] = "application/json"
        let payload = APIErrorBody(
            error: error.code, message: error.message, requestId: context.id, reason: error.reason, serverTimestamp: error.serverTimestamp
        )
        return JSONResponse.make(payload, status: error.status, headers: headers)
    }
}

/// A signed device request's check (`DeviceRequestAuthenticator`) in front of the route: the registered device goes
/// on the context, and the body it signed stays readable for the route.
struct SignedRequestAuthentication: RouterMiddleware {
    let service: DeviceService
    let maxBodySize: Int
    /// The request concerns the device key itself (its rotation): signed with that key even by an App Attest device.
    let deviceKeyOnly: Bool

    func handle(
        _ request: Request, context: KeywardRequestContext, next: (Request, KeywardRequestContext) async throws -> Response
    ) async throws -> Response {
        let body = try await request.body.collect(upTo: maxBodySize)
        // The request target exactly as sent: path and query are signed byte for byte.
        let signed = try SignedRequest(headers: request.headers, method: request.method.rawValue, target: request.head.path ?? "/", body: body.readableBytesView)
        var context = context
        context.authenticatedCaller = try await service.authenticate(realm: try context.realm.name, request: signed, deviceKeyOnly: deviceKeyOnly)
        var request = request
        request.body = RequestBody(buffer: body)
        return try await next(request, context)
    }
}
