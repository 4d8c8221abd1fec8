// Tests: the master key seals secrets to a context, its embedded key file is private, and PostgreSQL requires one.
import Foundation
@testable import KeywardServer
import XCTest

final class MasterKeyTests: XCTestCase {
    func testSealedSecretsOpenOnlyWithTheSameKeyAndContext() throws {
        let key = MasterKey.generate()
        let sealed = try key.seal(Array("private key bytes".utf8), context: "realm-a/kid-1")
        XCTAssertEqual(try key.open(sealed, context: "realm-a/kid-1"), Array("private key bytes".utf8))
        XCTAssertThrowsError(try key.open(sealed, context: "realm-b/kid-1"))
        XCTAssertThrowsError(try MasterKey.generate().open(sealed, context: "realm-a/kid-1"))
        var flipped = sealed
        flipped[flipped.count - 1] ^= 1
        XCTAssertThrowsError(try key.open(flipped, context: "realm-a/kid-1"))
        XCTAssertThrowsError(try key.open([1, 2, 3], context: "realm-a/kid-1"))
    }

    func testEmbeddedKeyFileIsCreatedPrivateAndReused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-mk-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = KeywardConfiguration()
        configuration.dataDirectory = directory
        let first = try MasterKey.resolve(configuration: configuration, embedded: true)
        let mode = try FileManager.default.attributesOfItem(atPath: directory + "/master.key")[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
        let sealed = try first.seal([42], context: "c")
        XCTAssertEqual(try MasterKey.resolve(configuration: configuration, embedded: true).open(sealed, context: "c"), [42])

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: directory + "/master.key")
        XCTAssertThrowsError(try MasterKey.resolve(configuration: configuration, embedded: true))
    }

    func testPostgresRequiresAnExplicitMasterKey() {
        XCTAssertThrowsError(try MasterKey.resolve(configuration: KeywardConfiguration(), embedded: false)) { error in
            XCTAssertEqual((error as? ConfigurationError)?.setting, "masterKey")
        }
    }
}
