// Tests: the file key store keeps keys private, refuses hostile names and bad files, and loads older key files.
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

    /// Written by keyward-device before KeyStore made its own keys (`{"alg","key"}`, PKCS#8 DER in base64url); the
    /// public point is the one OpenSSL printed for this key.
    static let earlierReleaseKeyFile = #"{"alg":"ES256","key":"MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgttL1INY3fapdkHM-gqhyzkX4i3zT4vMSOglchOla-huhRANCAAR4VStOlFdc-7X6GYg8TF3R88C51YbKz-Dxwk55ZDPUSpM009xFjE11CRt21mLJ6WxW0wY0TEwzu9lfOIyxttEL"}"#

    func testKeyFileFromAnEarlierReleaseStillLoadsAndSigns() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(Self.earlierReleaseKeyFile.utf8).write(to: directory.appendingPathComponent("push-mfa.key"))
        let key = try XCTUnwrap(try FileKeyStore(directory: directory).key(named: "push-mfa"))
        XCTAssertEqual(key.algorithm, .es256)
        XCTAssertEqual(key.publicJWK.material, .ec(
            curve: "P-256", x: try Base64URL.decode("eFUrTpRXXPu1-hmIPExd0fPAudWGys_g8cJOeWQz1Eo"),
            y: try Base64URL.decode("kzTT3EWMTXUJG3bWYsnpbFbTBjRMTDO72V84jLG20Qs")
        ))
        let jws = try JWS.parse(try JWS.sign(header: [:], claims: ["sub": "device"], key: key))
        XCTAssertTrue(key.publicJWK.verify(signature: jws.signature, over: jws.signingInput, algorithm: .es256))
    }

    func testSoftwareKeyFilesKeepTheTwoMemberFormat() throws {
        let store = FileKeyStore(directory: directory)
        let key = try store.createKey(named: "push-mfa", algorithm: .es384)
        let object = try StrictJSON.parseObject(Array(try Data(contentsOf: directory.appendingPathComponent("push-mfa.key"))))
        XCTAssertEqual(Set(object.keys), ["alg", "key"], "what earlier releases read")
        XCTAssertEqual(object["alg"], "ES384")
        let encoded = try XCTUnwrap(object["key"]?.stringValue)
        XCTAssertEqual(try SigningKey(algorithm: .es384, serialized: try Base64URL.decode(encoded)).publicJWK.thumbprint(), key.publicJWK.thumbprint())
    }

    func testLoadOrCreateAndPromoteThroughTheProtocol() throws {
        let store: any KeyStore = FileKeyStore(directory: directory)
        let current = try store.loadOrCreateKey(named: "push-mfa", algorithm: .es256)
        let again = try store.loadOrCreateKey(named: "push-mfa", algorithm: .rs256)
        XCTAssertEqual(again.publicJWK.thumbprint(), current.publicJWK.thumbprint(), "an existing key is kept, algorithm and all")
        XCTAssertEqual(again.algorithm, .es256)

        let next = try store.createKey(named: "push-mfa-next", algorithm: .es384)
        try store.promoteKey(named: "push-mfa-next", to: "push-mfa")
        XCTAssertEqual(try store.key(named: "push-mfa")?.publicJWK.thumbprint(), next.publicJWK.thumbprint())
        XCTAssertNil(try store.key(named: "push-mfa-next"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["push-mfa.key"])
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("push-mfa.key").path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)

        XCTAssertThrowsError(try store.promoteKey(named: "push-mfa-next", to: "push-mfa")) { error in
            XCTAssertEqual(error as? KeywardKitError, .noSuchKey("push-mfa-next"))
        }
        XCTAssertThrowsError(try store.promoteKey(named: "push-mfa", to: "../elsewhere")) { error in
            XCTAssertEqual(error as? KeywardKitError, .invalidKeyName("../elsewhere"))
        }
        try store.deleteKey(named: "push-mfa")
        XCTAssertNil(try store.key(named: "push-mfa"))
        try store.deleteKey(named: "push-mfa")
    }

    func testASecureEnclaveRecordInAFileIsRefused() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("push-mfa.key")
        try Data(#"{"alg":"ES256","key":"AAAA","storage":"secure-enclave"}"#.utf8).write(to: url)
        XCTAssertThrowsError(try FileKeyStore(directory: directory).key(named: "push-mfa")) { error in
            XCTAssertEqual(error as? KeywardKitError, .corruptKeyFile(url.path))
        }
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
