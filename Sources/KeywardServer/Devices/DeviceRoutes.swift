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
        let api = router.group("/realms/:realm/v1/device").add(middleware: DeviceErrorBodies()).add(middleware: RealmResolution(realms: realms))
        api.post("challenge") { request, context in
            let body = try await jsonBody(request)
            guard case .string(let appId)? = body["app_id"], !appId.isEmpty, appId.utf8.count <= 255 else {
                throw DeviceError.invalidRequest("app_id must be a string of 1-255 bytes")
            }
            let issued = try await service.challenge(realm: try context.realm.name, appId: appId)
            let answer = DeviceChallengeResponse(
                challenge: issued.challenge, expiresAt: issued.expiresAt.formatted(.iso8601), ttlSeconds: Int(service.challengeLifetime)
            )
            return JSONResponse.make(answer, headers: Self.noStore)
        }
        api.post("register") { request, context in
            let registration = try await service.register(
                realm: try context.realm.name, request: try RegistrationRequest(json: try await jsonBody(request)),
                developmentTraffic: Self.isDevelopmentTraffic(request.headers), clientAddress: clients.client(request, context)
            )
            let device = registration.device
            let answer = DeviceRegistrationResponse(
                deviceId: device.deviceId, status: device.status.rawValue, registeredAt: device.registeredAt.formatted(.iso8601),
                code: registration.alreadyRegistered ? .alreadyRegistered : nil
            )
            return JSONResponse.make(answer, status: registration.alreadyRegistered ? .ok : .created, headers: Self.noStore)
        }
        api.group().add(middleware: SignedRequestAuthentication(service: service, maxBodySize: maxBodySize, deviceKeyOnly: false))
            .get("status") { _, context in
                JSONResponse.make(Self.status(try context.caller(Device.self)), headers: Self.noStore)
            }
        api.group().add(middleware: SignedRequestAuthentication(service: service, maxBodySize: maxBodySize, deviceKeyOnly: true))
            .post("rotate-key") { request, context in
                let rotation = try KeyRotationRequest(json: try await jsonBody(request))
                let rotated = try await service.rotateKey(device: try context.caller(Device.self), rotation: rotation)
                return JSONResponse.make(Self.status(rotated), headers: Self.noStore)
            }
    }

    static let noStore: HTTPFields = [.cacheControl: "no-store"]

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

    private func jsonBody(_ request: Request) async throws -> JSONObject {
        let buffer = try await request.body.collect(upTo: maxBodySize)
        return try Self.jsonObject(request, body: buffer.readableBytesView)
    }

    private static func jsonObject(_ request: Request, body: some Collection<UInt8>) throws(DeviceError) -> JSONObject {
        guard request.headers[.contentType]?.split(separator: ";").first?.trimmingBlanks.lowercased() == "application/json" else {
            throw DeviceError(.unsupportedMediaType, .unsupportedMediaType, "Content-Type must be application/json")
        }
        do {
            return try requestJSONObject(body)
        } catch .malformed(let detail) {
            throw DeviceError.invalidRequest("the body is not a JSON object: \(detail)")
        } catch {
            throw DeviceError.invalidRequest("the body's strings must not contain NUL (\\u0000)")
        }
    }
}
