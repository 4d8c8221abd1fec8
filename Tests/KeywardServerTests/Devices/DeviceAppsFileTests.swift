// Tests: apps declared in devices.appsFile are added at start, updated on change; a wrong file names the member.
import AttestationTestSupport
import Foundation
@testable import KeywardServer
import XCTest

/// Apps declared in `devices.appsFile`: added at start, updated when their settings change, refused with the
/// member named when the file is wrong.
final class DeviceAppsFileTests: XCTestCase {
    private static func write(_ json: String, name: String = "apps.json", in directory: URL) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(json.utf8).write(to: url)
        return url.path
    }

    private static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func testDeclaredAppsAreAddedAtStartThenUpdatedOnlyWhenTheyChange() async throws {
        let folder = try Self.directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let keys = PlayIntegrityTestKeys()
        _ = try Self.write(keys.decryptionKeyBase64, name: "decryption.txt", in: folder)
        _ = try Self.write(keys.verificationKeyBase64, name: "verification.txt", in: folder)
        let path = try Self.write("""
            {"apps": [
              {"realm": "demo", "appId": "ios-app", "platform": "ios", "environment": "production", "teamId": "ABCDE12345",
               "bundleId": "com.example.app", "missingAttestation": "pending"},
              {"realm": "demo", "appId": "android-app", "platform": "android", "environment": "development", "packages": ["com.example.app"],
               "devBypass": true, "playIntegrityDecryptionKeyFile": "decryption.txt", "playIntegrityVerificationKeyFile": "verification.txt"}
            ]}
            """, in: folder)
        try await TestServer.forEachEngine(configure: { $0.devicesAppsFile = path }) { server, _ in
            let first = try await server.runtime.applyDeclaredApps()
            XCTAssertEqual(first.map(\.outcome), [.added, .added])
            let again = try await server.runtime.applyDeclaredApps()
            XCTAssertEqual(again.map(\.outcome), [.unchanged, .unchanged], "the same file changes nothing, sealed keys included")
            let ios = try await server.runtime.devices.apps.app(realm: "demo", appId: "ios-app")
            XCTAssertEqual(ios?.missingAttestation, .pending)
            XCTAssertEqual(ios?.appleAppId, "ABCDE12345.com.example.app")
            let android = try await server.runtime.devices.apps.app(realm: "demo", appId: "android-app")
            XCTAssertEqual(android?.devBypass, true)
            XCTAssertNotNil(android?.sealedPlayIntegrityKeys)

            var changed = try XCTUnwrap(server.runtime.devices.declaredApps.first)
            changed.missingAttestation = .accept
            let updated = try await server.runtime.devices.apps.declare(changed)
            XCTAssertEqual(updated, .updated)
            let reread = try await server.runtime.devices.apps.app(realm: "demo", appId: "ios-app")
            XCTAssertEqual(reread?.missingAttestation, .accept)
            XCTAssertEqual(reread?.createdAt, ios?.createdAt)
            let events = try await server.runtime.audit.events(realm: "demo").map(\.type)
            XCTAssertTrue(events.contains(.deviceAppUpdated))
        }
    }

    func testAWrongFileNamesTheAppAndTheMember() throws {
        let folder = try Self.directory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cases: [(String, String)] = [
            (#"{"apps": [{"realm": "demo", "appId": "a", "platform": "ios", "environment": "production", "teamId": "ABCDE12345", "bundleId": "b", "colour": "red"}]}"#, "unknown member \"colour\""),
            (#"{"apps": [{"realm": "demo", "appId": "a", "platform": "windows", "environment": "production"}]}"#, "platform must be one of"),
            (#"{"apps": [{"realm": "demo", "platform": "ios", "environment": "production"}]}"#, "appId is required"),
            (#"{"apps": [{"realm": "demo", "appId": "a", "platform": "android", "environment": "production", "packages": "com.x.y"}]}"#, "packages must be an array"),
            (#"{"apps": [{"realm": "demo", "appId": "a", "platform": "android", "environment": "production", "packages": ["com.x.y"], "playIntegrityDecryptionKeyFile": "missing.txt"}]}"#, "cannot read"),
            (#"{"applications": []}"#, "must hold"),
        ]
        for (json, expected) in cases {
            let path = try Self.write(json, in: folder)
            XCTAssertThrowsError(try DeviceAppsFile.load(path: path)) { error in
                let configurationError = error as? ConfigurationError
                XCTAssertEqual(configurationError?.setting, "devices.appsFile")
                XCTAssertTrue(configurationError?.problem.contains(expected) ?? false, "\(json): \(error)")
            }
        }
    }
}
