// Tests: KeywardKit's PasskeyClient with the software authenticator against a live server: a password sign-in, a
// passkey added, then sign-ins with it (without a username, and naming one), its counter kept in the file, and the
// realm's refusals surfaced with their reason.
import Foundation
import KeywardKit
import KeywardServer
import XCTest

final class PasskeyClientTests: XCTestCase {
    func testAddAPasskeyThenSignInWithIt() async throws {
        try await LiveServer.run { baseURL, runtime in
            var settings = PasskeySettings()
            settings.mode = .optional
            try await runtime.passkeys.settings.save(settings, realm: "demo")
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-passkeys-\(UUID().uuidString)/passkeys.json")
            defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
            let authenticator = try SoftwarePasskeyAuthenticator(file: file)
            let issuer = baseURL + "/realms/demo"

            let owner = try PasskeyClient(issuer: issuer, authenticator: authenticator)
            try await owner.signInWithPassword(username: "test", password: "test")
            let registered = try await owner.register(name: "Linux")
            XCTAssertEqual(registered.name, "Linux")
            XCTAssertEqual(registered.attestation, "none")
            let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
            XCTAssertEqual(mode, 0o600)

            let app = try PasskeyClient(issuer: issuer, authenticator: authenticator)
            let signedIn = try await app.signIn()
            XCTAssertEqual(signedIn.amr, ["hwk", "user"])
            XCTAssertEqual(signedIn.next, "/realms/demo/account")
            let cookie = await app.sessionCookie
            XCTAssertNotNil(cookie)
            let named = try await PasskeyClient(issuer: issuer, authenticator: authenticator).signIn(username: "test")
            XCTAssertEqual(named.amr, ["hwk", "user"])
            let stored = await authenticator.stored
            XCTAssertEqual(stored.first?.signCount, 2, "each sign-in counted, and kept")

            // Once the account has a passkey, a password alone is not the end of the sign-in.
            do {
                try await PasskeyClient(issuer: issuer, authenticator: authenticator).signInWithPassword(username: "test", password: "test")
                XCTFail("the password alone signed in")
            } catch KeywardKitError.secondStepRequired(let next) {
                XCTAssertEqual(next, "/realms/demo/login/passkey")
            }

            await authenticator.setUserVerified(false)
            do {
                _ = try await PasskeyClient(issuer: issuer, authenticator: authenticator).signIn()
                XCTFail("a sign-in without user verification was accepted")
            } catch KeywardKitError.passkeyRefused(let status, let code, let reason, _) {
                XCTAssertEqual(status, 400)
                XCTAssertEqual(code, "passkey_refused")
                XCTAssertEqual(reason, "webauthn_user_not_verified")
            }
        }
    }
}
