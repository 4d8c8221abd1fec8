// Tests (issue 32): KeywardKit's AppInstallation against a live server — one key from first launch to approving a
// login: registered, signed in with it, push approvals turned on with it, rotated once for all of them, and
// everything refused once the device is removed.
import Foundation
import KeywardJOSE
import KeywardKit
import KeywardServer
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class AppInstallationTests: XCTestCase {
    private var directory: URL!

    override func setUp() {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-e2e-installation-\(UUID())")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    private func installation(_ issuer: String) -> AppInstallation {
        AppInstallation(
            configuration: AppInstallation.Configuration(
                appId: DeviceRegistrarAgainstServerTests.appId, platform: .ios,
                signIn: SignInClient.Configuration(issuer: issuer, clientId: "app", redirectURI: "com.example.app:/cb")
            ),
            keyStore: FileKeyStore(directory: directory), store: FileInstallationStore(directory: directory),
            registrarOptions: .init(retry: RetryPolicy(sleep: { _ in XCTFail("nothing here should be retried") }))
        )
    }

    /// The app as the operator adds it twice: a device app accepting a missing attestation, and a public client.
    private static func addTheApp(_ runtime: KeywardRuntime) async throws {
        try await DeviceRegistrarAgainstServerTests.addApp(runtime)
        let redirects = try ClientRedirects(redirectURIs: ["com.example.app:/cb"], postLogoutRedirectURIs: [], firstParty: true, requirePAR: false)
        _ = try await runtime.oauth.clients.createPublicClient(realm: "demo", clientId: "app", requireDPoP: true, scope: "", redirects: redirects)
    }

    private static func approveALogin(_ runtime: KeywardRuntime, with push: PushMFAClient, session: String) async throws {
        let foundUser = try await runtime.accounts.users.user(realm: "demo", username: "test")
        let user = try XCTUnwrap(foundUser)
        let foundRealm = try await runtime.oauth.realms.realm(named: "demo")
        let realm = try XCTUnwrap(foundRealm)
        guard case .created(let challenge, _, _, _) = try await runtime.pushMFA.service.startLogin(realm: realm, user: user, clientId: "web", sessionId: session) else {
            return XCTFail("no challenge")
        }
        let pending = try await push.pendingChallenges()
        XCTAssertTrue(pending.contains { $0.cid == challenge.id }, "the device sees the login")
        let status = try await push.respond(challengeId: challenge.id, action: .approve, userVerification: challenge.userVerification.expectedValue)
        XCTAssertEqual(status, "approved")
    }

    func testOneKeyRegistersSignsInApprovesRotatesAndIsRemovedAsOneThing() async throws {
        try await LiveServer.run { baseURL, runtime in
            let issuer = baseURL + "/realms/demo"
            try await Self.addTheApp(runtime)
            let app = installation(issuer)

            // Before registering there is no key to sign in with.
            do {
                _ = try await app.startSignIn()
                XCTFail("signed in before registering")
            } catch let error as KeywardKitError {
                XCTAssertEqual(error, .notRegistered(appId: DeviceRegistrarAgainstServerTests.appId))
            }

            let registered = try await app.register()
            let deviceId = registered.state.deviceId
            let request = try await app.startSignIn()
            let deviceKey = try await app.registration().key
            XCTAssertTrue(request.url.absoluteString.contains("dpop_jkt=" + deviceKey.publicJWK.thumbprint()), "the code is bound to the device key")
            let tokens = try await app.finishSignIn(request, redirect: try await PageWalker(baseURL: baseURL).signIn(at: request.url, username: "test", password: "test"))
            let claims = try UnverifiedJWT(tokens.accessToken).claims
            XCTAssertEqual(claims["device_id"]?.stringValue, deviceId, "the token names the registered device")
            XCTAssertEqual(claims["cnf"]?.objectValue?["jkt"]?.stringValue, deviceKey.publicJWK.thumbprint())

            let push = try await app.enablePush(.init(providerType: "log", providerId: "apns-token-1", deviceLabel: "Test iPhone"))
            XCTAssertEqual(push.state.deviceId, deviceId)
            XCTAssertEqual(push.state.registeredAppId, DeviceRegistrarAgainstServerTests.appId)
            XCTAssertEqual(push.key.publicJWK.thumbprint(), deviceKey.publicJWK.thumbprint(), "push approvals are on the device key")
            try await Self.approveALogin(runtime, with: push, session: "s1")

            // A relaunch: a new instance finds the registration, the sign-in and push approvals in its store.
            let relaunched = installation(issuer)
            let restoredPush = try await relaunched.pushApprovals()
            let restored = try XCTUnwrap(restoredPush)
            try await Self.approveALogin(runtime, with: restored, session: "s2")

            // One rotation carries the push approvals and the sign-in to the new key.
            try await relaunched.rotateKey()
            let newKey = try await relaunched.registration().key
            XCTAssertNotEqual(newKey.publicJWK.thumbprint(), deviceKey.publicJWK.thumbprint())
            let rebound = try UnverifiedJWT(try await relaunched.accessToken()).claims
            XCTAssertEqual(rebound["cnf"]?.objectValue?["jkt"]?.stringValue, newKey.publicJWK.thumbprint(), "the sign-in was refreshed with the new key")
            XCTAssertEqual(rebound["device_id"]?.stringValue, deviceId)
            let pushAfterRotation = try await relaunched.pushApprovals()
            let rotatedPush = try XCTUnwrap(pushAfterRotation)
            XCTAssertEqual(rotatedPush.key.publicJWK.thumbprint(), newKey.publicJWK.thumbprint())
            try await Self.approveALogin(runtime, with: rotatedPush, session: "s3")

            // Removed on the server: the sign-in, the approvals and signed requests all end.
            let found = try await runtime.accounts.users.user(realm: "demo", username: "test")
            let user = try XCTUnwrap(found)
            let removed = try await runtime.devices.apps.removeDevice(realm: "demo", appId: DeviceRegistrarAgainstServerTests.appId, deviceId: deviceId, userId: user.id)
            XCTAssertNotNil(removed)
            do {
                _ = try await rotatedPush.pendingChallenges()
                XCTFail("a removed device listed challenges")
            } catch let error as KeywardKitError {
                guard case .server(let status, _, _) = error else { return XCTFail("\(error)") }
                XCTAssertTrue([401, 403].contains(status), "\(error)")
            }
            do {
                _ = try await relaunched.send("GET", issuer + "/v1/whoami")
                XCTFail("the gate took a removed device's token, or its refresh")
            } catch let error as KeywardKitError {
                // The gate answered 401; the refresh that followed was refused.
                guard case .server(400, "invalid_grant", _) = error else { return XCTFail("\(error)") }
            }
            let (_, signed) = try await relaunched.registrar.send(appId: DeviceRegistrarAgainstServerTests.appId, method: "GET", path: "/v1/device/status")
            XCTAssertEqual(signed.statusCode, 403)
        }
    }

    func testPushNeedsASignInAndASecondFactorWhenThePersonHasOne() async throws {
        try await LiveServer.run { baseURL, runtime in
            let issuer = baseURL + "/realms/demo"
            try await Self.addTheApp(runtime)
            let app = installation(issuer)
            try await app.register()
            do {
                try await app.enablePush()
                XCTFail("push turned on with no one signed in")
            } catch let error as KeywardKitError {
                XCTAssertEqual(error, .notSignedIn)
            }
            let noPush = try await app.pushApprovals()
            XCTAssertNil(noPush)

            // Signed in with the password only; since then the person enrolled a phone by QR code, so this sign-in
            // may not add a second way to approve.
            let request = try await app.startSignIn()
            _ = try await app.finishSignIn(request, redirect: try await PageWalker(baseURL: baseURL).signIn(at: request.url, username: "test", password: "test"))
            let found = try await runtime.accounts.users.user(realm: "demo", username: "test")
            let user = try XCTUnwrap(found)
            let start = try await runtime.pushMFA.service.startEnrollment(realm: "demo", user: user)
            _ = try await PushMFAClient.enroll(
                link: try EnrollmentLink.parse(start.link), issuer: issuer, clientId: "push-device-client", clientSecret: "device-client-secret",
                key: try SigningKey.generate(.es256)
            )
            do {
                try await app.enablePush()
                XCTFail("push turned on without the second factor")
            } catch let error as KeywardKitError {
                guard case .server(403, _, _) = error else { return XCTFail("\(error)") }
            }
            let stillNoPush = try await app.pushApprovals()
            XCTAssertNil(stillNoPush, "nothing kept after a refusal")
        }
    }
}

