// Tests: device settings that name files are read at start, and production Android apps must name signing certs.
import Foundation
import Logging
@testable import KeywardServer
import XCTest

/// The device settings that name files are read at start, and a bad file names its setting.
final class DeviceConfigurationTests: XCTestCase {
    func testFilesAreReadAtStartAndABadOneNamesItsSetting() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let blueline = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fixtures/android-key-attestation/blueline/sdk28/TEE_EC_NONE.pem"), encoding: .utf8
        )
        let root2016 = "-----BEGIN CERTIFICATE-----" + blueline.components(separatedBy: "-----BEGIN CERTIFICATE-----").last!
        let roots = directory.appendingPathComponent("roots.pem")
        try root2016.write(to: roots, atomically: true, encoding: .utf8)
        let statusList = directory.appendingPathComponent("status.json")
        try Data(#"{"entries": {"2c8cdddfd5e03bfc": {"status": "REVOKED", "reason": "KEY_COMPROMISE"}}}"#.utf8).write(to: statusList)

        var configuration = KeywardConfiguration()
        configuration.devicesChallengeLifetime = 120
        configuration.androidExtraRootsFile = roots.path
        configuration.androidRevocationListFile = statusList.path
        let settings = try DeviceSettings(configuration.declaredDeviceSettings, logger: Logger(label: "test"))
        XCTAssertEqual(settings.challengeLifetime, 120)
        XCTAssertEqual(settings.androidRoots.certificates.count, 3, "Google's two roots and the operator's")
        XCTAssertEqual(settings.androidRevocations?.current.entries.count, 1)

        configuration.androidRevocationListFile = roots.path
        XCTAssertThrowsError(try DeviceSettings(configuration.declaredDeviceSettings, logger: Logger(label: "test"))) { error in
            XCTAssertEqual((error as? ConfigurationError)?.setting, "devices.android.revocationListFile", "\(error)")
        }
        configuration.androidRevocationListFile = nil
        configuration.androidExtraRootsFile = directory.appendingPathComponent("missing.pem").path
        XCTAssertThrowsError(try DeviceSettings(configuration.declaredDeviceSettings, logger: Logger(label: "test"))) { error in
            XCTAssertEqual((error as? ConfigurationError)?.setting, "devices.android.extraRootsFile", "\(error)")
        }
        configuration.androidExtraRootsFile = statusList.path
        XCTAssertThrowsError(try DeviceSettings(configuration.declaredDeviceSettings, logger: Logger(label: "test"))) { error in
            XCTAssertEqual((error as? ConfigurationError)?.setting, "devices.android.extraRootsFile", "\(error)")
        }
        configuration.androidExtraRootsFile = nil
        configuration.playIntegrityServiceAccountFile = statusList.path
        XCTAssertThrowsError(try DeviceSettings(configuration.declaredDeviceSettings, logger: Logger(label: "test"))) { error in
            XCTAssertEqual((error as? ConfigurationError)?.setting, "devices.playIntegrity.serviceAccountFile", "\(error)")
        }
        configuration.playIntegrityServiceAccountFile = nil
        configuration.playIntegrityURL = "ftp://example.com"
        XCTAssertThrowsError(try DeviceSettings(configuration.declaredDeviceSettings, logger: Logger(label: "test"))) { error in
            XCTAssertEqual((error as? ConfigurationError)?.setting, "devices.playIntegrity.url", "\(error)")
        }
    }
}

/// Security review H1: a production Android app must name its signing certificates, or any app sideloaded under
/// its package name on a genuine phone passes Key Attestation.
final class DeviceAppValidationTests: XCTestCase {
    func testAProductionAndroidAppNeedsASigningCertificateDigest() throws {
        let production = DeviceAppService.Registration(realm: "demo", appId: "a", platform: .android, environment: .production, packages: ["com.example.app"])
        XCTAssertThrowsError(try DeviceAppService.validated(production, now: Date())) { error in
            XCTAssertTrue("\(error)".contains("--signing-cert-digest"), "\(error)")
        }
        var withDigest = production
        withDigest.signingCertDigests = [String(repeating: "ab", count: 32)]
        XCTAssertNoThrow(try DeviceAppService.validated(withDigest, now: Date()))
        var development = production
        development.environment = .development
        XCTAssertNoThrow(try DeviceAppService.validated(development, now: Date()), "development builds are signed with debug keys")
    }
}
