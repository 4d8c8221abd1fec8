// The admin API's realm settings: push MFA's and passkeys', read whole and changed member by member.
import Foundation
import Hummingbird
import KeywardJOSE

/// `/admin/realms/{realm}/settings/push-mfa` and `…/settings/passkeys` (`realms:read`, `realms:write`). A `PATCH`
/// changes the members it names, each checked as the CLI checks it (`keyward push-mfa settings`, `keyward realms
/// update`); a refused member names itself and nothing is saved. Nodes read a change within 5 seconds.
struct AdminSettingsRoutes {
    let pushMFA: PushMFAService
    let passkeys: PasskeySettingsStore
    let maxBodySize: Int

    func register(on realm: RouterGroup<KeywardRequestContext>) {
        realm.get("settings/push-mfa") { _, context in
            try context.admin.require(.realmsRead)
            return Self.answer(try await pushMFA.settings(realm: try context.realm.name).jsonObject)
        }
        realm.patch("settings/push-mfa") { request, context in
            try context.admin.require(.realmsWrite)
            let name = try context.realm.name
            var settings = try await pushMFA.settings(realm: name)
            for (key, value) in try await Self.members(request, maxSize: maxBodySize) {
                guard let text = Self.text(value) else { throw AdminProblem.invalid("\(key) must be a string, a number or true/false", field: key) }
                do throws(PushMFASettingsError) {
                    try settings.apply(key, text)
                } catch {
                    throw AdminProblem.invalid(error.description, field: key)
                }
            }
            try await pushMFA.saveSettings(settings, realm: name)
            return Self.answer(settings.jsonObject)
        }
        realm.get("settings/passkeys") { _, context in
            try context.admin.require(.realmsRead)
            return Self.answer(try await passkeys.settings(realm: try context.realm.name).jsonObject)
        }
        realm.patch("settings/passkeys") { request, context in
            try context.admin.require(.realmsWrite)
            let name = try context.realm.name
            var settings = try await passkeys.settings(realm: name)
            for (key, value) in try await Self.members(request, maxSize: maxBodySize) {
                try Self.apply(key, value, to: &settings)
            }
            try await passkeys.save(settings, realm: name)
            return Self.answer(settings.jsonObject)
        }
    }

    /// The members of `PasskeySettings.jsonObject`, each through the CLI's check of the same setting.
    private static func apply(_ key: String, _ value: JSONValue, to settings: inout PasskeySettings) throws(AdminProblem) {
        func set(_ option: String, _ text: String) throws(AdminProblem) {
            do throws(PasskeySettingsError) {
                try settings.apply(option, text)
            } catch {
                throw .invalid("\(key): expected \(error.expected)", field: key)
            }
        }
        switch (key, value) {
        case ("mode", .string(let text)): try set("passkeys", text)
        case ("rpId", .null): settings.rpID = nil
        case ("rpId", .string(let text)): try set("webauthn-rp-id", text)
        case ("origins", .array(let items)):
            settings.extraOrigins = []
            for item in items {
                guard case .string(let origin) = item else { throw .invalid("origins must be an array of strings", field: key) }
                try set("webauthn-origin", origin)
            }
        case ("userVerification", .string(let text)): try set("webauthn-user-verification", text)
        case ("attestation", .string(let text)): try set("webauthn-attestation", text)
        case ("attestationRoots", .null): settings.attestationRootsPEM = nil
        case ("attestationRoots", .string(let text)): try set("webauthn-attestation-roots", text)
        case ("secondStep", .bool(let on)): settings.secondStep = on
        case ("mode", _), ("rpId", _), ("origins", _), ("userVerification", _), ("attestation", _), ("attestationRoots", _), ("secondStep", _):
            throw .invalid("\(key) is not of the expected type", field: key)
        default:
            throw .invalid("unknown member '\(key.prefix(64))'; the members are mode, rpId, origins, userVerification, attestation, attestationRoots, secondStep", field: String(key.prefix(64)))
        }
    }

    /// The body's members in order of name: the body is read strictly (`AdminRequestBody`), each member used.
    private static func members(_ request: Request, maxSize: Int) async throws -> [(String, JSONValue)] {
        var body = try await AdminRequestBody.read(request, maxSize: maxSize)
        return body.all().sorted { $0.0 < $1.0 }
    }

    private static func text(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): text
        case .bool(let flag): String(flag)
        case .number: value.intValue.map(String.init)
        default: nil
        }
    }

    private static func answer(_ object: JSONObject) -> Response {
        JSONResponse.make(bytes: StrictJSON.serialize(.object(object)), headers: [.cacheControl: "no-store"])
    }
}
