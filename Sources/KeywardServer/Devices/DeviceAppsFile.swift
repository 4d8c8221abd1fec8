// Reading the device apps declared in the configured apps file, applied when the server starts.
import Foundation
import KeywardJOSE

/// Device apps declared in a file (`devices.appsFile`), applied when the server starts: each app is added, or its
/// settings replaced when they differ, so a deployment's apps live in version control beside its configuration.
/// Apps added with the CLI and absent from the file are left alone.
///
///     {"apps": [{"realm": "demo", "appId": "com.example.ios", "platform": "ios", "environment": "production",
///                "teamId": "ABCDE12345", "bundleId": "com.example.app", "missingAttestation": "pending"}]}
///
/// Members are the `keyward apps add` options in camelCase: realm, appId, platform, environment, teamId, bundleId,
/// packages, signingCertDigests, missingAttestation, failedAttestation, devBypass, playIntegrityGoogle,
/// playIntegrityDecryptionKeyFile, playIntegrityVerificationKeyFile (paths relative to the apps file).
enum DeviceAppsFile {
    static let setting = "devices.appsFile"
    static let members: Set<String> = [
        "realm", "appId", "platform", "environment", "teamId", "bundleId", "packages", "signingCertDigests", "missingAttestation",
        "failedAttestation", "devBypass", "playIntegrityGoogle", "playIntegrityDecryptionKeyFile", "playIntegrityVerificationKeyFile",
    ]

    static func load(path: String) throws(ConfigurationError) -> [DeviceAppService.Registration] {
        guard let data = FileManager.default.contents(atPath: path), data.count <= 1 << 20 else {
            throw ConfigurationError(setting: setting, problem: "\(path) cannot be read (or is over 1 MiB)")
        }
        let object: JSONObject
        do {
            object = try StrictJSON.parseObject(Array(data))
        } catch {
            throw ConfigurationError(setting: setting, problem: "\(path) is not a JSON object: \(error.message)")
        }
        guard object.keys.sorted() == ["apps"], case .array(let items)? = object["apps"] else {
            throw ConfigurationError(setting: setting, problem: "\(path) must hold {\"apps\": [ … ]}")
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        var registrations: [DeviceAppService.Registration] = []
        for (index, item) in items.enumerated() {
            do throws(DeviceAppError) {
                guard case .object(let app) = item else { throw DeviceAppError("not an object") }
                registrations.append(try registration(app, relativeTo: directory))
            } catch {
                throw ConfigurationError(setting: setting, problem: "\(path), apps[\(index)]: \(error.description)")
            }
        }
        return registrations
    }

    private static func registration(_ app: JSONObject, relativeTo directory: URL) throws(DeviceAppError) -> DeviceAppService.Registration {
        if let unknown = app.keys.sorted().first(where: { !members.contains($0) }) { throw DeviceAppError("unknown member \"\(unknown)\"") }
        func text(_ name: String) throws(DeviceAppError) -> String? {
            switch app[name] {
            case nil: return nil
            case .string(let value)?: return value
            default: throw DeviceAppError("\(name) must be a string")
            }
        }
        func required(_ name: String) throws(DeviceAppError) -> String {
            guard let value = try text(name) else { throw DeviceAppError("\(name) is required") }
            return value
        }
        func list(_ name: String) throws(DeviceAppError) -> [String] {
            guard let value = app[name] else { return [] }
            guard case .array(let items) = value, let strings = Optional(items.compactMap(\.stringValue)), strings.count == items.count else {
                throw DeviceAppError("\(name) must be an array of strings")
            }
            return strings
        }
        func flag(_ name: String) throws(DeviceAppError) -> Bool {
            switch app[name] {
            case nil: return false
            case .bool(let value)?: return value
            default: throw DeviceAppError("\(name) must be true or false")
            }
        }
        func choice<Value: RawRepresentable<String> & CaseIterable>(_ name: String, default fallback: Value?) throws(DeviceAppError) -> Value {
            guard let raw = try text(name) else {
                guard let fallback else { throw DeviceAppError("\(name) is required") }
                return fallback
            }
            guard let value = Value(rawValue: raw) else {
                throw DeviceAppError("\(name) must be one of \(Value.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return value
        }
        /// A path in the file, relative to the file's folder unless absolute, with the member's name.
        func file(_ name: String) throws(DeviceAppError) -> (path: String, setting: String)? {
            guard let path = try text(name) else { return nil }
            return ((path.hasPrefix("/") ? URL(fileURLWithPath: path) : directory.appendingPathComponent(path)).path, name)
        }
        let keys = try PlayIntegrityKeys.read(
            decryption: try file("playIntegrityDecryptionKeyFile"), verification: try file("playIntegrityVerificationKeyFile")
        )
        return DeviceAppService.Registration(
            realm: try required("realm"), appId: try required("appId"), platform: try choice("platform", default: nil),
            environment: try choice("environment", default: nil), teamId: try text("teamId"), bundleId: try text("bundleId"),
            packages: try list("packages"), signingCertDigests: try list("signingCertDigests"),
            missingAttestation: try choice("missingAttestation", default: .reject), failedAttestation: try choice("failedAttestation", default: .reject),
            devBypass: try flag("devBypass"), playIntegrityKeys: keys, playIntegrityGoogle: try flag("playIntegrityGoogle")
        )
    }
}
