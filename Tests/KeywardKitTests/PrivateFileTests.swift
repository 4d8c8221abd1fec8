// Tests: key and device state files are private from the first byte; a failed replacement leaves nothing behind.
import Foundation
import KeywardJOSE
import KeywardKit
import KeywardWire
import XCTest

/// Keys and device state are private from the first byte, even in a directory someone else created, and a
/// replacement never leaves a temporary file or a missing file behind.
final class PrivateFileTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-private-\(UUID())")
        // An existing, world-readable directory: the files inside must still be 0600.
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    private func mode(_ name: String) throws -> Int? {
        (try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)[.posixPermissions] as? NSNumber)?.intValue
    }

    func testKeyAndStateFilesArePrivateInAnExistingDirectory() throws {
        let store = FileKeyStore(directory: directory)
        let first = try SigningKey.generate(.es256)
        try store.store(first, named: "push-mfa")
        let second = try SigningKey.generate(.es384)
        try store.store(second, named: "push-mfa")
        XCTAssertEqual(try mode("push-mfa.key"), 0o600)
        XCTAssertEqual(try store.key(named: "push-mfa")?.publicJWK.thumbprint(), second.publicJWK.thumbprint(), "the replacement won")

        var state = DeviceState(
            issuer: "https://id.example.com/realms/demo", realm: "demo", userId: "u", username: "test", credentialId: "c", deviceId: "d",
            deviceType: "linux", deviceLabel: "laptop", pushProviderId: "p", pushProviderType: "log", keyAlgorithm: "ES384"
        )
        try state.save(to: directory)
        state.pushProviderId = "q"
        try state.save(to: directory)
        XCTAssertEqual(try mode("device.json"), 0o600)
        XCTAssertEqual(try DeviceState.load(from: directory), state)

        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted(), ["device.json", "push-mfa.key"], "no temporaries left")
    }

    func testNewStateDirectoryIsOwnerOnly() throws {
        let nested = directory.appendingPathComponent("state")
        try FileKeyStore(directory: nested).store(try SigningKey.generate(.es256), named: "push-mfa")
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: nested.path)[.posixPermissions] as? NSNumber)?.intValue, 0o700)
    }

    func testFailedReplacementIsNamedAndLeavesNothingBehind() throws {
        // A directory where the key file should go: the rename fails (even for root) after the temporary was written.
        let target = directory.appendingPathComponent("push-mfa.key")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        XCTAssertThrowsError(try FileKeyStore(directory: directory).store(try SigningKey.generate(.es256), named: "push-mfa")) { error in
            XCTAssertEqual((error as? PrivateFile.WriteError)?.path, target.path)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["push-mfa.key"], "the temporary was removed")
    }
}
