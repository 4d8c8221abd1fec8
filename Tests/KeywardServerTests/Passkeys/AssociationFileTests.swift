// Tests: the association files list what the realms using this host for passkeys declare, and an Android app's
// own origin is accepted for its passkeys without naming it again.
import AttestationTestSupport
import Crypto
import Foundation
import KeywardJOSE
@testable import KeywardServer
import KeywardWire
import XCTest

final class AssociationFileTests: XCTestCase {
    static let digest = String(repeating: "ab", count: 31) + "0f"

    static func addApps(_ server: TestServer) async throws {
        let apps = server.runtime.devices.apps
        _ = try await apps.add(.init(realm: "demo", appId: "ios", platform: .ios, environment: .production, teamId: "ABCDE12345", bundleId: "com.example.app"))
        _ = try await apps.add(.init(
            realm: "demo", appId: "android", platform: .android, environment: .production, packages: ["com.example.app"], signingCertDigests: [Self.digest]
        ))
    }

    func testTheFilesListTheAppsAndOriginsOfRealmsWithPasskeysOnThisHost() async throws {
        try await TestServer.forEachEngine { server, client in
            try await Self.addApps(server)
            let browser = TestBrowser(client)
            for path in ["/.well-known/apple-app-site-association", "/.well-known/assetlinks.json", "/.well-known/webauthn"] {
                let page = try await browser.get(path)
                XCTAssertEqual(page.status, .notFound, "passkeys are off: nothing to declare at \(path)")
            }
            try await PasskeyFixture.enable(server) { $0.extraOrigins = ["https://shop.keyward.test"] }
            let apple = try await browser.get("/.well-known/apple-app-site-association")
            XCTAssertEqual(apple.status, .ok)
            XCTAssertEqual(apple.headers[.contentType], "application/json")
            XCTAssertEqual(apple.html, #"{"webcredentials":{"apps":["ABCDE12345.com.example.app"]}}"#)
            let links = try await browser.get("/.well-known/assetlinks.json")
            let expected = Self.digest.uppercased().enumerated().map { $0.offset > 0 && $0.offset % 2 == 0 ? ":" + String($0.element) : String($0.element) }.joined()
            XCTAssertEqual(
                links.html,
                #"[{"relation":["delegate_permission/common.get_login_creds"],"target":{"namespace":"android_app","package_name":"com.example.app","sha256_cert_fingerprints":[""# + expected + #""]}}]"#
            )
            let related = try await browser.get("/.well-known/webauthn")
            XCTAssertEqual(related.html, #"{"origins":["https://shop.keyward.test"]}"#)

            // A realm whose passkeys use another RP ID is not this host's to declare.
            try await PasskeyFixture.enable(server) { $0.rpID = "login.example.com" }
            let elsewhere = try await browser.get("/.well-known/apple-app-site-association")
            XCTAssertEqual(elsewhere.status, .notFound)
        }
    }

    func testAnAndroidAppsOwnOriginSignsIn() async throws {
        try await TestServer.forEachEngine { server, client in
            try await Self.addApps(server)
            try await PasskeyFixture.enable(server)
            let owner = TestBrowser(client)
            var passkey = try PasskeyFixture.authenticator()
            let registered = try await PasskeyFixture.register(owner, passkey)
            XCTAssertEqual(registered.status, .created)
            passkey.origin = "android:apk-key-hash:" + Base64URL.encode(try XCTUnwrap(HexDigit.bytes(Self.digest)))
            let app = TestBrowser(client)
            let handle = try await PasskeyFixture.handle(server)
            let signedIn = try await PasskeyFixture.signIn(app, passkey, csrf: try await PasskeyFixture.csrf(app, fromLogin: true), userHandle: handle)
            XCTAssertEqual(signedIn.status, .ok, signedIn.html)
            passkey.origin = "android:apk-key-hash:" + Base64URL.encode(Array(SHA256.hash(data: Array("another app".utf8))))
            let other = TestBrowser(client)
            let refused = try await PasskeyFixture.signIn(other, passkey, csrf: try await PasskeyFixture.csrf(other, fromLogin: true), userHandle: handle)
            XCTAssertEqual(PasskeyFixture.reason(refused), "webauthn_origin_not_allowed")
        }
    }
}
