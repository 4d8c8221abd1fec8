// Tests: a replaced attestation revocation list file is picked up without a restart; a damaged one keeps the last.
import AttestationTestSupport
import Crypto
import Foundation
import KeywardAttestation
import Logging
@testable import KeywardServer
import XCTest

/// Security review M3: Google's attestation status list changes as keys leak, and the operator's copy of it is
/// refreshed by replacing the file; the server takes a replaced file without a restart and keeps the last good list
/// when the new file is damaged.
final class RevocationListReloadTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Writes `text` to the list file, dated `modified` (file times have a coarse grain on some file systems, so each
    /// version gets a time of its own).
    private func writeList(_ text: String, modified: Date) throws -> String {
        try Self.writeList(text, modified: modified, in: directory)
    }

    private static func writeList(_ text: String, modified: Date, in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("status.json")
        try Data(text.utf8).write(to: file, options: .atomic)
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: file.path)
        return file.path
    }

    private static func list(_ serials: [String]) -> String {
        let entries = serials.map { #""\#($0)": {"status": "REVOKED", "reason": "KEY_COMPROMISE"}"# }.joined(separator: ", ")
        return #"{"entries": {\#(entries)}}"#
    }

    func testAReplacedFileIsReadAgainAndADamagedOneKeepsTheLastGoodList() throws {
        let now = Date()
        let path = try writeList(Self.list(["1a"]), modified: now - 60)
        let file = try RevocationListFile(path: path, logger: Logger(label: "test"))
        XCTAssertEqual(file.current.entries.count, 1)
        XCTAssertEqual(file.reloadIfChanged(now: now), .unchanged)

        _ = try writeList(Self.list(["1a", "2b"]), modified: now - 30)
        XCTAssertEqual(file.reloadIfChanged(now: now), .reloaded(entries: 2))
        XCTAssertNotNil(file.current.entries["2b"])

        _ = try writeList(#"{"entries": {"2b": {"status": "REVO"#, modified: now - 20)
        guard case .keptPrevious(let problem) = file.reloadIfChanged(now: now) else { return XCTFail("a damaged file must not be taken") }
        XCTAssertTrue(problem.contains(path), problem)
        XCTAssertEqual(file.current.entries.count, 2, "the last good list stays in force")
        XCTAssertEqual(file.reloadIfChanged(now: now), .unchanged, "a damaged file is reported once")

        try FileManager.default.removeItem(atPath: path)
        XCTAssertEqual(file.reloadIfChanged(now: now), .unchanged, "a file being replaced is looked at again next time")
        XCTAssertEqual(file.current.entries.count, 2)
        _ = try writeList(Self.list([]), modified: now - 10)
        XCTAssertEqual(file.reloadIfChanged(now: now), .reloaded(entries: 0), "an empty list is a list")
    }

    func testARevocationListedAfterStartRefusesTheNextRegistration() async throws {
        let directory: URL = directory
        try await TestServer.forEachEngine { server, _ in
            try await DeviceAndroidKeyTests.addApp(server, "android-app")
            let now = server.clock.now()
            let forged = try ForgedAndroidAttestation(time: now)
            let path = try Self.writeList(Self.list(["7f"]), modified: Date() - 60, in: directory)
            let file = try RevocationListFile(path: path, logger: Logger(label: "test"))
            let runtime = server.runtime
            let service = DeviceService(
                store: SQLDeviceStore(database: runtime.database), singleUse: runtime.singleUse, challengeKey: SymmetricKey(size: .bits256),
                attestations: PlatformAttestationVerifier(androidRoots: PinnedRoots([forged.root]), androidRevocations: file),
                audit: runtime.audit, metrics: runtime.metrics, clock: server.clock
            )
            func register() async throws -> DeviceService.Registration {
                let installation = TestInstallation()
                let challenge = try await service.challenge(realm: "demo", appId: "android-app").challenge
                return try await service.register(realm: "demo", request: try DeviceAndroidKeyTests.registration(
                    installation, appId: "android-app", challenge: challenge, forged: forged, vector: "caiman/sdk36/SB_EC_RKP", time: now
                ), developmentTraffic: false)
            }
            let first = try await register()
            XCTAssertEqual(first.device.status, .registered)

            let rootSerial = forged.root.serialNumber.bytes.map { String(format: "%02x", $0) }.joined()
            _ = try Self.writeList(Self.list(["7f", rootSerial]), modified: Date() - 30, in: directory)
            XCTAssertEqual(file.reloadIfChanged(now: Date()), .reloaded(entries: 2))
            do {
                _ = try await register()
                XCTFail("a chain under a revoked certificate registered")
            } catch let error as DeviceError {
                XCTAssertEqual(error.code, .invalidAttestation)
                XCTAssertEqual(error.reason, AttestationReason.revoked.rawValue, "\(error)")
            }
        }
    }

    func testTheRunningServerChecksTheFileInTheBackground() async throws {
        let path = try writeList(Self.list(["1a"]), modified: Date() - 60)
        try await TestServer.forEachEngine(engines: [.sqlite], configure: { $0.androidRevocationListFile = path }) { server, _ in
            let services = server.runtime.backgroundServices
            XCTAssertTrue(services.contains { $0 is RevocationListReloader }, "\(services)")
            XCTAssertEqual(server.runtime.devices.revocationList?.current.entries.count, 1)
        }
        try await TestServer.forEachEngine(engines: [.sqlite]) { server, _ in
            XCTAssertFalse(server.runtime.backgroundServices.contains { $0 is RevocationListReloader }, "no list, no reloader")
        }
    }
}
