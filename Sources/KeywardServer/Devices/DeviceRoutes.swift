// The device API's routes: challenge, register, status, key rotation.
import Foundation
import HTTPTypes
import Hummingbird
import KeywardJOSE
import KeywardWire

/// The device API under `/realms/{realm}/v1/device/`. Thin: parse, call the service, answer.
struct DeviceRoutes {
    let service: DeviceService
    let realms: RealmService
    let maxBodySize: Int
    let clients: ClientNetworks

    /// Headers that mark development traffic: Keyward's own, and the one Synheart's SDKs send from debug builds.
    static let developmentHeaders = [HTTPField.Name("X-Keyward-Dev-Mode")!, HTTPField.Name("X-Synheart-Dev-Mode")!]

    func register(on router: Router<KeywardRequestContext>) {
        let base = "/realms/:realm/v1/device"
        router.post("\(base)/challenge") { request, context in
            try await answer(context) {
                let realm = try await realmName(context)
                let body = try await jsonBody(request)
                guard case .string(let appId)? = body["app_id"], !appId.isEmpty, appId.utf8.count <= 255 else {
                    throw DeviceError.invalidRequest("app_id must be a string of 1-255 bytes")
                }
                let issued = try await service.challenge(realm: realm, appId: appId)
                let answer = DeviceChallengeResponse(
                    challenge: issued.challenge, expiresAt: issued.expiresAt.formatted(.iso8601), ttlSeconds: Int(service.challengeLifetime)
                )
                return JSONResponse.make(answer, headers: Self.noStore)
            }
        }
        router.post("\(base)/register") { request, context in
            try await answer(context) {
                let realm = try await realmName(context)
                let registration = try await service.register(
                    realm: realm, request: try RegistrationRequest(json: try await jsonBody(request)),
                    developmentTraffic: Self.isDevelopmentTraffic(request.headers), clientAddress: clients.client(request, context)
                )
                let device = registration.device
                let answer = DeviceRegistrationResponse(
                    deviceId: device.deviceId, status: device.status.rawValue, registeredAt: device.registeredAt.formatted(.iso8601),
                    code: registration.alreadyRegistered ? .alreadyRegistered : nil
                )
                return JSONResponse.make(answer, status: registration.alreadyRegistered ? .ok : .created, headers: Self.noStore)
            }
        }
        router.get("\(base)/status") { request, context in
            try await answer(context) {
                let realm = try await realmName(context)
                let body = try await request.body.collect(upTo: maxBodySize)
                let device = try await service.authenticate(realm: realm, request: try signed(request, body: body.readableBytesView))
                return JSONResponse.make(Self.status(device), headers: Self.noStore)
            }
        }
        router.post("\(base)/rotate-key") { request, context in
            try await answer(context) {
                let realm = try await realmName(context)
                let body = try await request.body.collect(upTo: maxBodySize)
                let device = try await service.authenticate(realm: realm, request: try signed(request, body: body.readableBytesView), deviceKeyOnly: true)
                let rotation = try KeyRotationRequest(json: try Self.jsonObject(request, body: body.readableBytesView))
                return JSONResponse.make(Self.status(try await service.rotateKey(device: device, rotation: rotation)), headers: Self.noStore)
            }
        }
    }

    static let noStore: HTTPFields = [.cacheControl: "no-store"]

    private func signed(_ request: Request, body: some Collection<UInt8>) throws(DeviceError) -> SignedRequest {
        // The request target exactly as sent: path and query are signed byte for byte.
        try SignedRequest(headers: request.headers, method: request.method.rawValue, target: request.head.path ?? "/", body: body)
    }

    private static func status(_ device: Device) -> DeviceStatusResponse {
        DeviceStatusResponse(
            appId: device.appId, deviceId: device.deviceId, platform: device.platform.rawValue, status: device.status.rawValue,
            registeredAt: device.registeredAt.formatted(.iso8601), keyRotatedAt: device.keyRotatedAt?.formatted(.iso8601)
        )
    }

    /// Any value but "false" or "0" counts: a header that is there was put there on purpose.
    static func isDevelopmentTraffic(_ headers: HTTPFields) -> Bool {
        developmentHeaders.contains { name in
            headers[values: name].contains { !["false", "0"].contains($0.trimmingCharacters(in: .whitespaces).lowercased()) }
        }
    }

    /// The realm through the one resolver, its refusal in the device API's body.
    private func realmName(_ context: KeywardRequestContext) async throws(DeviceError) -> String {
        do {
            return try await realms.pathRealm(context).name
        } catch let error as APIError where error.code == .realmNotFound {
            throw DeviceError(.notFound, .realmNotFound, "realm '\(displayable(context.parameters.get("realm") ?? ""))' does not exist")
        } catch {
            throw .unavailable
        }
    }

    private func jsonBody(_ request: Request) async throws -> JSONObject {
        let buffer = try await request.body.collect(upTo: maxBodySize)
        return try Self.jsonObject(request, body: buffer.readableBytesView)
    }

    private static func jsonObject(_ request: Request, body: some Collection<UInt8>) throws(DeviceError) -> JSONObject {
        guard request.headers[.contentType]?.split(separator: ";").first?.trimmingBlanks.lowercased() == "application/json" else {
            throw DeviceError(.unsupportedMediaType, .unsupportedMediaType, "Content-Type must be application/json")
        }
        do {
            return try StrictJSON.parseObject(body)
        } catch {
            throw DeviceError.invalidRequest("the body is not a JSON object: \(error.message)")
        }
    }

    private func answer(_ context: KeywardRequestContext, _ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch let error as DeviceError {
            var headers = Self.noStore
            headers[.contentType] = "application/json"
            let payload = APIErrorBody(
                error: error.code, message: error.message, requestId: context.id, reason: error.reason, serverTimestamp: error.serverTimestamp
            )
            return JSONResponse.make(payload, status: error.status, headers: headers)
        }
    }
}
