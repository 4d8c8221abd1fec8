// Tests: the Keychain key store (and Secure Enclave, where present) creates, signs, promotes and deletes keys.
#if canImport(CryptoKit) && canImport(Security) && (os(iOS) || os(macOS) || os(visionOS))
import CryptoKit
import Foundation
import KeywardJOSE
import KeywardKit
import Security
import XCTest

/// KeychainKeyStore against the real Keychain and, where the machine has one, the Secure Enclave: create, load,
/// sign, verify, promote, delete. Runs on Apple platforms only; items live under a service of their own.
final class KeychainKeyStoreTests: XCTestCase {
    private var store: KeychainKeyStore!

    override func setUp() {
        store = KeychainKeyStore(service: "com.keyward.tests.\(UUID().uuidString)")
    }

    override func tearDown() {
        for name in ["push-mfa", "push-mfa-next", "software"] { try? store.deleteKey(named: name) }
    }

    /// The data-protection keychain wants an entitlement that a bare `swift test` on macOS does not have.
    private func createOrSkip(_ name: String, _ algorithm: JWSAlgorithm) throws -> any JWSSigner {
        do {
            return try store.createKey(named: name, algorithm: algorithm)
        } catch KeywardKitError.keychain(_, _, let status) where status == errSecMissingEntitlement {
            throw XCTSkip("this test host has no keychain entitlement (errSecMissingEntitlement)")
        }
    }

    private func assertSignsVerifiably(_ key: any JWSSigner, file: StaticString = #filePath, line: UInt = #line) throws {
        let jwt = try JWS.sign(header: ["typ": "JWT"], claims: ["sub": "device"], key: key)
        let parsed = try JWS.parse(jwt)
        if key.algorithm == .es256 { XCTAssertEqual(parsed.signature.count, 64, "r || s", file: file, line: line) }
        XCTAssertTrue(key.publicJWK.verify(signature: parsed.signature, over: parsed.signingInput, algorithm: key.algorithm), file: file, line: line)
    }

    func testES256RoundTripsThroughTheKeychain() throws {
        let created = try createOrSkip("push-mfa", .es256)
        XCTAssertEqual(created.algorithm, .es256)
        // In the enclave when there is one: then the key is not a software SigningKey.
        XCTAssertEqual(created is SigningKey, !SecureEnclave.isAvailable)
        let loaded = try XCTUnwrap(try store.key(named: "push-mfa"))
        XCTAssertEqual(loaded.publicJWK.thumbprint(), created.publicJWK.thumbprint())
        try assertSignsVerifiably(created)
        try assertSignsVerifiably(loaded)

        let proof = try DPoPSigner(key: loaded).proof(method: "GET", url: "https://api.example.com/x")
        XCTAssertEqual(try JWS.parse(proof).header["alg"], "ES256")

        try store.deleteKey(named: "push-mfa")
        XCTAssertNil(try store.key(named: "push-mfa"))
        try store.deleteKey(named: "push-mfa")
    }

    func testOtherAlgorithmsAreSoftwareKeysInTheKeychain() throws {
        let created = try createOrSkip("software", .es384)
        XCTAssertTrue(created is SigningKey, "the enclave signs P-256 only")
        let loaded = try XCTUnwrap(try store.key(named: "software"))
        XCTAssertEqual(loaded.publicJWK.thumbprint(), created.publicJWK.thumbprint())
        try assertSignsVerifiably(loaded)
    }

    func testPromotionReplacesTheCurrentKey() throws {
        let current = try createOrSkip("push-mfa", .es256)
        let next = try store.createKey(named: "push-mfa-next", algorithm: .es256)
        XCTAssertNotEqual(next.publicJWK.thumbprint(), current.publicJWK.thumbprint())
        try store.promoteKey(named: "push-mfa-next", to: "push-mfa")
        let promoted = try XCTUnwrap(try store.key(named: "push-mfa"))
        XCTAssertEqual(promoted.publicJWK.thumbprint(), next.publicJWK.thumbprint())
        try assertSignsVerifiably(promoted)
        XCTAssertNil(try store.key(named: "push-mfa-next"))
        XCTAssertThrowsError(try store.promoteKey(named: "push-mfa-next", to: "push-mfa")) { error in
            XCTAssertEqual(error as? KeywardKitError, .noSuchKey("push-mfa-next"))
        }
    }
}
#endif
