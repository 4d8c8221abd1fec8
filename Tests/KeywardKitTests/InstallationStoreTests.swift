// Tests: an installation's files — the sign-in names the app whose key it is bound to, the push state says it is on
// the registered key, both are forgotten on request, and files written before either field existed still read.
import Foundation
import KeywardKit
import XCTest

final class InstallationStoreTests: XCTestCase {
    private var directory: URL!

    override func setUp() {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-installation-\(UUID())")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    private static let installation = AppInstallation.Configuration(
        appId: "com.example.kit", platform: .ios,
        signIn: SignInClient.Configuration(issuer: "https://id.example.com/realms/demo", clientId: "app", redirectURI: "com.example.app:/cb")
    )

    /// Tokens as an app kept them (SignInTokens is made by SignInClient; here it is read back as a store would).
    private static let tokens: SignInTokens = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let json = #"{"accessToken":"a","refreshToken":"r","idToken":"i","accessTokenExpiresAt":1900000000,"subject":"u-1","authTime":1899999000,"amr":["pwd"],"acr":"urn:keyward:acr:1fa"}"#
        return try! decoder.decode(SignInTokens.self, from: Data(json.utf8))
    }()

    func testTheSignInAndThePushStateAreKeptAndForgotten() throws {
        let store = FileInstallationStore(directory: directory)
        XCTAssertNil(try store.signIn())
        XCTAssertNil(try store.pushState())

        try store.saveSignIn(Self.tokens, installation: Self.installation)
        XCTAssertEqual(try store.signIn(), Self.tokens)
        let saved = try XCTUnwrap(try FileSignInStore(directory: directory).load())
        XCTAssertEqual(saved.appId, "com.example.kit", "keyward-device's refresh and logout find the registered key by it")
        XCTAssertEqual(saved.clientId, "app")

        let push = DeviceState(
            issuer: Self.installation.issuer, realm: "demo", userId: "u-1", username: "", credentialId: "d-1", deviceId: "d-1", deviceType: "ios",
            deviceLabel: "", pushProviderId: "", pushProviderType: "none", keyAlgorithm: "ES256", registeredAppId: "com.example.kit"
        )
        try store.savePushState(push)
        XCTAssertEqual(try store.pushState(), push)
        let mode = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("device.json").path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)

        try store.saveSignIn(nil, installation: Self.installation)
        try store.savePushState(nil)
        XCTAssertNil(try store.signIn())
        XCTAssertNil(try store.pushState())
        try store.savePushState(nil)
    }

    func testFilesWrittenBeforeTheOneKeyFieldsStillRead() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let device = #"{"issuer":"https://id.example.com/realms/demo","realm":"demo","userId":"u-1","username":"alice","credentialId":"c-1","deviceId":"d-1","deviceType":"linux","deviceLabel":"keyward-device","pushProviderId":"x","pushProviderType":"log","keyAlgorithm":"RS256"}"#
        try Data(device.utf8).write(to: directory.appendingPathComponent("device.json"))
        let state = try XCTUnwrap(try FileInstallationStore(directory: directory).pushState())
        XCTAssertNil(state.registeredAppId, "a phone enrolled by QR code")

        let signIn = #"{"issuer":"https://id.example.com/realms/demo","clientId":"app","redirectURI":"com.example.app:/cb","scopes":["openid"],"tokens":{"accessToken":"a","idToken":"i","accessTokenExpiresAt":1900000000,"subject":"u-1","amr":["pwd"]}}"#
        try Data(signIn.utf8).write(to: directory.appendingPathComponent("signin.json"))
        let saved = try XCTUnwrap(try FileSignInStore(directory: directory).load())
        XCTAssertNil(saved.appId, "a sign-in on keyward-device's own key")
    }

    func testACorruptPushStateNamesItsFile() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("{".utf8).write(to: directory.appendingPathComponent("device.json"))
        XCTAssertThrowsError(try FileInstallationStore(directory: directory).pushState()) { error in
            XCTAssertEqual(error as? KeywardKitError, .corruptStateFile(self.directory.appendingPathComponent("device.json").path))
        }
    }
}
