// Tests: acr_values=urn:keyward:acr:mfa runs the second factor on a session that had none, and acr says what ran.
import Foundation
import HummingbirdTesting
import KeywardJOSE
@testable import KeywardServer
import XCTest

final class AuthorizationStepUpTests: XCTestCase {
    func testASessionWithoutASecondFactorIsSteppedUpWithThePushAndTheTokensSayMfa() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp()
            let browser = TestBrowser(client)
            // Signed in with a password alone (no phone yet), then a phone is enrolled.
            _ = try await browser.signIn()
            let (device, deviceToken) = try await server.enrolledDevice(client)

            let asked = try await browser.get(app.authorizationPath(["acr_values": "urn:keyward:acr:mfa"]))
            XCTAssertEqual(asked.status, .ok, "the person starts the second factor")
            XCTAssertTrue(asked.headers[.contentSecurityPolicy]?.contains("form-action 'self' com.example.app:") ?? false)
            let started = try await browser.post("/realms/demo/protocol/openid-connect/auth/step-up", [
                "csrf": asked.field("csrf") ?? "", "id": asked.field("id") ?? "",
            ])
            XCTAssertEqual(started.location, "/realms/demo/login/push", "the second factor runs on the signed-in session")
            let waiting = try await browser.get("/realms/demo/login/push")
            XCTAssertTrue(
                waiting.headers[.contentSecurityPolicy]?.contains("form-action 'self' com.example.app:") ?? false,
                "the push page's form ends at the app once approved"
            )
            let approved = try await device.respond(client, token: deviceToken, challengeId: try XCTUnwrap(waiting.field("challengeId")))
            XCTAssertEqual(approved.status, .ok, approved.body)
            let done = try await browser.post("/realms/demo/login/push", ["csrf": waiting.field("csrf") ?? ""])
            let resume = try XCTUnwrap(done.location)
            XCTAssertTrue(resume.hasPrefix("/realms/demo/protocol/openid-connect/auth/resume?id="), resume)
            let back = try await browser.get(resume)
            let code = try XCTUnwrap(URLComponents(string: try XCTUnwrap(back.location))?.parameter("code"))
            let issued = try await client.requestToken(body: app.tokenForm(code: code), proofs: [])
            let idToken = try await server.verifyIDToken(try XCTUnwrap(issued.json["id_token"]?.stringValue), clientId: "app")
            XCTAssertEqual(idToken["acr"]?.stringValue, "urn:keyward:acr:mfa")
            XCTAssertEqual(idToken["amr"]?.arrayValue?.compactMap(\.stringValue), ["pwd", "mfa"])

            // The session now has both: a second request is answered at once.
            let again = try await app.authorize(browser, ["acr_values": "urn:keyward:acr:mfa"])
            XCTAssertNotNil(again.parameter("code"))
            let silent = try await browser.get(app.authorizationPath(["acr_values": "urn:keyward:acr:mfa", "prompt": "none"]))
            XCTAssertNotNil(URLComponents(string: silent.location ?? "")?.parameter("code"))
        }
    }

    func testAUserWithoutASecondFactorGoesOnAndAcrSaysOneFactor() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp()
            let browser = TestBrowser(client)
            let silent = try await browser.get(app.authorizationPath(["acr_values": "urn:keyward:acr:mfa", "prompt": "none"]))
            XCTAssertEqual(URLComponents(string: silent.location ?? "")?.parameter("error"), "login_required")
            _ = try await browser.signIn()
            let noPage = try await browser.get(app.authorizationPath(["acr_values": "urn:keyward:acr:mfa", "prompt": "none"]))
            XCTAssertEqual(URLComponents(string: noPage.location ?? "")?.parameter("error"), "interaction_required")
            let answer = try await app.authorize(browser, ["acr_values": "urn:keyward:acr:mfa"])
            let code = try XCTUnwrap(answer.parameter("code"), "\(answer)")
            let issued = try await client.requestToken(body: app.tokenForm(code: code), proofs: [])
            let idToken = try await server.verifyIDToken(try XCTUnwrap(issued.json["id_token"]?.stringValue), clientId: "app")
            XCTAssertEqual(idToken["acr"]?.stringValue, "urn:keyward:acr:1fa")
        }
    }

    func testAFreshSignInWithAPhoneRunsThePushAndRecordsMfa() async throws {
        try await TestServer.forEachEngine { server, client in
            let app = try await server.registerApp()
            let (device, deviceToken) = try await server.enrolledDevice(client)
            let browser = TestBrowser(client)
            let start = try await browser.get(app.authorizationPath())
            let login = try await browser.get(try XCTUnwrap(start.location))
            let afterPassword = try await browser.post("/realms/demo/login", ["csrf": login.field("csrf") ?? "", "username": "test", "password": "test"])
            XCTAssertEqual(afterPassword.location, "/realms/demo/login/push")
            let waiting = try await browser.get("/realms/demo/login/push")
            let value1 = try await device.respond(client, token: deviceToken, challengeId: try XCTUnwrap(waiting.field("challengeId"))).status
            XCTAssertEqual(value1, .ok)
            let done = try await browser.post("/realms/demo/login/push", ["csrf": waiting.field("csrf") ?? ""])
            let back = try await browser.get(try XCTUnwrap(done.location))
            let code = try XCTUnwrap(URLComponents(string: try XCTUnwrap(back.location))?.parameter("code"))
            let issued = try await client.requestToken(body: app.tokenForm(code: code), proofs: [])
            let idToken = try await server.verifyIDToken(try XCTUnwrap(issued.json["id_token"]?.stringValue), clientId: "app")
            XCTAssertEqual(idToken["amr"]?.arrayValue?.compactMap(\.stringValue), ["pwd", "mfa"])
            XCTAssertEqual(idToken["acr"]?.stringValue, "urn:keyward:acr:mfa")
        }
    }
}
