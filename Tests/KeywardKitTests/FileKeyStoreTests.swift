import Foundation
import KeywardJOSE
import KeywardKit
import XCTest

final class FileKeyStoreTests: XCTestCase {
    private var directory: URL!

    override func setUp() {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-kit-\(UUID())")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    func testKeysPersistWithPrivateFileModes() throws {
        let store = FileKeyStore(directory: directory)
        for algorithm in JWSAlgorithm.allCases {
            let name = "device-\(algorithm.rawValue)"
            let created = try store.loadOrCreateKey(named: name, algorithm: algorithm)
            let loaded = try XCTUnwrap(try store.key(named: name))
            XCTAssertEqual(loaded.publicJWK.thumbprint(), created.publicJWK.thumbprint(), "\(algorithm)")
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name + ".key").path)
            XCTAssertEqual(attributes[.posixPermissions] as? Int, 0o600)
        }
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int, 0o700)
    }

    func testHostileKeyNamesAreRefused() {
        let store = FileKeyStore(directory: directory)
        for name in ["../escape", "", "a/b", String(repeating: "k", count: 65), "dot.key"] {
            XCTAssertThrowsError(try store.key(named: name), name) { error in
                XCTAssertEqual(error as? KeywardKitError, .invalidKeyName(name))
            }
        }
    }

    func testCorruptKeyFileIsReported() throws {
        let store = FileKeyStore(directory: directory)
        _ = try store.loadOrCreateKey(named: "device", algorithm: .es256)
        try Data(#"{"alg":"ES256"}"#.utf8).write(to: directory.appendingPathComponent("device.key"))
        XCTAssertThrowsError(try store.key(named: "device"))
    }

    func testSignerProofsVerify() async throws {
        let key = try SigningKey.generate(.es256)
        let now = Date()
        let signer = DPoPSigner(key: key, clock: { now })
        let proof = try signer.proof(method: "GET", url: "https://api.example.com/x?y=1", accessToken: "token")
        let verified = try await DPoPVerifier(replayCache: MemoryReplayCache()).verify(
            proof: proof, method: "GET", url: "https://api.example.com/x", accessToken: "token", expectedThumbprint: signer.thumbprint, now: now
        )
        XCTAssertEqual(verified.thumbprint, signer.thumbprint)
    }
}

actor MemoryReplayCache: DPoPReplayCache {
    private var seen: Set<String> = []

    func recordOnce(jti: String, keyThumbprint: String, expiresAt: Date, now: Date) async throws -> Bool {
        seen.insert(keyThumbprint + ":" + jti).inserted
    }
}
