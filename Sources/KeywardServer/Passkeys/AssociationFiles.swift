// The files that let a deployment's native apps use its passkeys: Apple's app-site association, Android's asset
// links, and the related origins of WebAuthn Level 3 §5.11.
import Foundation
import Hummingbird
import KeywardJOSE

/// `/.well-known/apple-app-site-association` (`webcredentials`), `/.well-known/assetlinks.json`
/// (`get_login_creds`) and `/.well-known/webauthn` (related origins), one of each per deployment: they speak for
/// the host of `publicURL`, so they list what the realms whose passkeys use that host as their RP ID declare —
/// their apps (`keyward apps`: team and bundle id, package names and signing-certificate digests) and their related
/// origins (`--webauthn-origin`). A host with nothing to list answers 404.
struct AssociationFiles: Sendable {
    let realms: RealmService
    let apps: DeviceAppService
    let settings: PasskeySettingsStore
    let publicURL: String

    func register(on router: Router<KeywardRequestContext>) {
        router.get("/.well-known/apple-app-site-association") { _, _ in try await answer(try await appleAssociation()) }
        router.get("/.well-known/assetlinks.json") { _, _ in try await answer(try await assetLinks()) }
        router.get("/.well-known/webauthn") { _, _ in try await answer(try await relatedOrigins()) }
    }

    /// Each realm using this host as its passkeys' RP ID, with its settings and apps.
    private func realmsOnThisHost() async throws -> [(settings: PasskeySettings, apps: [DeviceApp])] {
        let host = URLComponents(string: publicURL)?.host?.lowercased()
        var found: [(PasskeySettings, [DeviceApp])] = []
        for realm in try await realms.listRealms() {
            let passkeys = try await settings.settings(realm: realm.name)
            guard passkeys.mode != .off, passkeys.effectiveRPID(publicURL: publicURL) == host else { continue }
            found.append((passkeys, try await apps.list(realm: realm.name)))
        }
        return found
    }

    func appleAssociation() async throws -> JSONValue? {
        let ids = Set(try await realmsOnThisHost().flatMap(\.apps).compactMap(\.appleAppId)).sorted()
        guard !ids.isEmpty else { return nil }
        return .object(["webcredentials": .object(["apps": .array(ids.map(JSONValue.string))])])
    }

    func assetLinks() async throws -> JSONValue? {
        var byPackage: [String: Set<String>] = [:]
        for app in try await realmsOnThisHost().flatMap(\.apps) where app.platform == .android {
            for package in app.packages { byPackage[package, default: []].formUnion(app.signingCertDigests.map(Self.fingerprint)) }
        }
        guard !byPackage.isEmpty else { return nil }
        return .array(byPackage.keys.sorted().map { package in
            .object([
                "relation": .array(["delegate_permission/common.get_login_creds"]),
                "target": .object([
                    "namespace": "android_app", "package_name": .string(package),
                    "sha256_cert_fingerprints": .array(byPackage[package, default: []].sorted().map(JSONValue.string)),
                ]),
            ])
        })
    }

    func relatedOrigins() async throws -> JSONValue? {
        let origins = Set(try await realmsOnThisHost().flatMap(\.settings.extraOrigins).filter { $0.hasPrefix("https://") }).sorted()
        guard !origins.isEmpty else { return nil }
        return .object(["origins": .array(origins.map(JSONValue.string))])
    }

    /// Lower-case hex (as `keyward apps` stores digests) to the colon-separated upper-case form asset links use.
    static func fingerprint(_ hex: String) -> String {
        let digits = Array(hex.uppercased())
        return stride(from: 0, to: digits.count, by: 2).map { String(digits[$0..<min($0 + 2, digits.count)]) }.joined(separator: ":")
    }

    private func answer(_ document: JSONValue?) async throws -> Response {
        guard let document else { throw APIError(.notFound, .notFound, "no realm on this host declares anything for this file") }
        return Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "public, max-age=300"],
            body: .init(byteBuffer: .init(bytes: StrictJSON.serialize(document)))
        )
    }
}
