// The admin API's device apps and their devices: what `keyward apps` and `keyward devices remove` do.
import Foundation
import Hummingbird

/// `/admin/realms/{realm}/apps…`. `PUT` makes the app what the body says (as the apps file does: added when missing,
/// its settings replaced, its devices kept); Play Integrity keys go in as the two keys' text and are stored sealed.
struct AdminAppRoutes {
    let apps: DeviceAppService
    let maxBodySize: Int

    func register(on realm: RouterGroup<KeywardRequestContext>) {
        realm.get("apps") { request, context in
            try context.admin.require(.appsRead)
            let page = try AdminPage(request)
            return page.response(all: try await apps.list(realm: try context.realm.name), key: \.appId, render: AdminAppBody.init, request: request)
        }
        realm.post("apps") { request, context in
            try context.admin.require(.appsWrite)
            var input = try await AdminRequestBody.read(request, maxSize: maxBodySize)
            let registration = try Self.registration(&input, realm: try context.realm.name, appId: try input.requiredString("app_id", maxLength: 255))
            try input.finish()
            let added = try await apps.add(registration)
            return AdminJSON.make(AdminAppBody(added), status: .created, headers: [.location: request.uri.path + "/" + pathSegment(added.appId), .cacheControl: "no-store"])
        }
        realm.get("apps/:appId") { _, context in
            try context.admin.require(.appsRead)
            return AdminJSON.make(AdminAppBody(try await existing(context)), headers: [.cacheControl: "no-store"])
        }
        realm.put("apps/:appId") { request, context in
            try context.admin.require(.appsWrite)
            let appId = context.decodedParameter("appId")
            var input = try await AdminRequestBody.read(request, maxSize: maxBodySize)
            if let named = try input.string("app_id", maxLength: 255), named != appId {
                throw AdminProblem.invalid("app_id in the body must be the path's app id", field: "app_id")
            }
            let registration = try Self.registration(&input, realm: try context.realm.name, appId: appId)
            try input.finish()
            let outcome = try await apps.declare(registration)
            let app = try await existing(context)
            return AdminJSON.make(AdminAppBody(app), status: outcome == .added ? .created : .ok, headers: [.cacheControl: "no-store"])
        }
        realm.delete("apps/:appId") { _, context in
            try context.admin.require(.appsWrite)
            try await apps.remove(realm: try context.realm.name, appId: try await existing(context).appId)
            return Response(status: .noContent)
        }
        realm.get("apps/:appId/devices") { request, context in
            try context.admin.require(.appsRead)
            let app = try await existing(context)
            let page = try AdminPage(request)
            let devices = try await apps.devices(realm: app.realm, appId: app.appId, after: page.after, limit: page.limit + 1)
            return page.response(devices, key: \.deviceId, render: AdminDeviceBody.init, request: request)
        }
        for (action, status) in [("approve", Device.Status.registered), ("reject", .rejected)] {
            realm.post("apps/:appId/devices/:deviceId/\(action)") { _, context in
                try context.admin.require(.appsWrite)
                let app = try await existing(context)
                try await apps.decide(realm: app.realm, appId: app.appId, deviceId: context.decodedParameter("deviceId"), status: status)
                return Response(status: .noContent)
            }
        }
        realm.delete("apps/:appId/devices/:deviceId") { _, context in
            try context.admin.require(.appsWrite)
            let app = try await existing(context)
            let deviceId = context.decodedParameter("deviceId")
            guard try await apps.removeDevice(realm: app.realm, appId: app.appId, deviceId: deviceId) != nil else {
                throw AdminProblem.notFound("no device '\(deviceId.prefix(64))' of app '\(app.appId)'")
            }
            return Response(status: .noContent)
        }
    }

    private func existing(_ context: KeywardRequestContext) async throws -> DeviceApp {
        let appId = context.decodedParameter("appId")
        guard let app = try await apps.app(realm: try context.realm.name, appId: appId) else {
            throw AdminProblem.notFound("app '\(appId.prefix(64))' is not registered in this realm")
        }
        return app
    }

    private static func registration(_ input: inout AdminRequestBody, realm: String, appId: String) throws -> DeviceAppService.Registration {
        let platform: DeviceApp.Platform = try choice(&input, "platform", default: nil)
        let environment: DeviceApp.Environment = try choice(&input, "environment", default: nil)
        var registration = DeviceAppService.Registration(
            realm: realm, appId: appId, platform: platform, environment: environment, teamId: try input.string("team_id", maxLength: 64),
            bundleId: try input.string("bundle_id", maxLength: 255), packages: try input.strings("packages", maxCount: 16, maxLength: 255) ?? [],
            signingCertDigests: try input.strings("signing_cert_digests", maxCount: 16, maxLength: 128) ?? [],
            missingAttestation: try choice(&input, "missing_attestation", default: .reject),
            failedAttestation: try choice(&input, "failed_attestation", default: .reject), devBypass: try input.bool("dev_bypass") ?? false,
            playIntegrityGoogle: try input.bool("play_integrity_google") ?? false
        )
        let decryption = try input.string("play_integrity_decryption_key", maxLength: 4096)
        let verification = try input.string("play_integrity_verification_key", maxLength: 4096)
        switch (decryption, verification) {
        case (nil, nil): break
        case (let decryption?, let verification?): registration.playIntegrityKeys = try PlayIntegrityKeys(decryptionKey: decryption, verificationKey: verification)
        default:
            throw AdminProblem.invalid("Play Integrity needs both keys, the decryption and the verification key", field: decryption == nil ? "play_integrity_decryption_key" : "play_integrity_verification_key")
        }
        return registration
    }

    private static func choice<Value: RawRepresentable<String> & CaseIterable>(
        _ input: inout AdminRequestBody, _ name: String, default fallback: Value?
    ) throws(AdminProblem) -> Value {
        guard let raw = try input.string(name, maxLength: 32) else {
            guard let fallback else { throw .invalid("the body has no \(name)", field: name) }
            return fallback
        }
        guard let value = Value(rawValue: raw) else {
            throw .invalid("\(name) must be one of \(Value.allCases.map(\.rawValue).joined(separator: ", "))", field: name)
        }
        return value
    }
}

struct AdminAppBody: Encodable {
    let appId: String
    let platform: String
    let environment: String
    let teamId: String?
    let bundleId: String?
    let packages: [String]
    let signingCertDigests: [String]
    let missingAttestation: String
    let failedAttestation: String
    let devBypass: Bool
    let playIntegrity: String
    let createdAt: String

    init(_ app: DeviceApp) {
        (appId, platform, environment) = (app.appId, app.platform.rawValue, app.environment.rawValue)
        (teamId, bundleId, packages, signingCertDigests) = (app.teamId, app.bundleId, app.packages, app.signingCertDigests)
        (missingAttestation, failedAttestation, devBypass) = (app.missingAttestation.rawValue, app.failedAttestation.rawValue, app.devBypass)
        playIntegrity = app.playIntegrityGoogle ? "google" : app.sealedPlayIntegrityKeys != nil ? "keys" : "none"
        createdAt = app.createdAt.formatted(.iso8601)
    }
}

struct AdminDeviceBody: Encodable {
    let appId: String
    let deviceId: String
    let platform: String
    let status: String
    let attestation: String
    let attestationLevel: String
    let userId: String?
    let registeredAt: String
    let keyRotatedAt: String?
    let lastSeenAt: String?
    let removedAt: String?

    init(_ device: Device) {
        (appId, deviceId, platform, status) = (device.appId, device.deviceId, device.platform.rawValue, device.status.rawValue)
        (attestation, attestationLevel, userId) = (device.attestationFacts.kind, device.attestationLevel.rawValue, device.userId)
        registeredAt = device.registeredAt.formatted(.iso8601)
        (keyRotatedAt, lastSeenAt, removedAt) = (device.keyRotatedAt?.formatted(.iso8601), device.lastSeenAt?.formatted(.iso8601), device.removedAt?.formatted(.iso8601))
    }
}
