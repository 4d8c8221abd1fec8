// Tests: users delete their account only right after signing in; their phones, identities and sessions go too.
import Foundation
@testable import KeywardServer
import XCTest

/// A user deletes their own account: only right after signing in (a browser left signed in cannot), and then
/// their phones, identities and sessions go with the user.
final class AccountDeletionTests: XCTestCase {
    func testDeletionAsksForARecentSignInAndRemovesEverythingOfTheUser() async throws {
        try await TestServer.forEachEngine { server, client in
            let users = server.runtime.accounts.users
            let dana = try await users.createUser(realm: "demo", username: "dana", password: "dana-password-1")
            _ = try await users.createExternalUser(realm: "demo", username: "dana-link", kind: .hostIssuer, issuer: "https://hr.example", subject: "d-1")
            let browser = TestBrowser(client)
            let other = TestBrowser(client)
            _ = try await browser.signIn(username: "dana", password: "dana-password-1")
            _ = try await other.signIn(username: "dana", password: "dana-password-1")

            server.clock.advance(by: BrowserSession.recentSignIn + 60)
            let stale = try await browser.get("/realms/demo/account/delete")
            XCTAssertEqual(stale.location, "/realms/demo/login?reauth=1&return_to=/realms/demo/account/delete")
            let form = try await browser.get("/realms/demo/login?reauth=1&return_to=/realms/demo/account/delete")
            XCTAssertEqual(form.status, .ok, "a signed-in browser gets the form when asked to sign in again")
            XCTAssertTrue(form.contains("Sign in again to continue."))
            let staleDelete = try await browser.post("/realms/demo/account/delete", ["csrf": form.field("csrf") ?? ""])
            XCTAssertEqual(staleDelete.location, "/realms/demo/login?reauth=1&return_to=/realms/demo/account/delete", "a stale session cannot delete")
            let stillThere = try await users.user(realm: "demo", username: "dana")
            XCTAssertNotNil(stillThere)

            let again = try await browser.post("/realms/demo/login", ["csrf": form.field("csrf") ?? "", "username": "dana", "password": "dana-password-1"])
            XCTAssertEqual(again.location, "/realms/demo/account/delete")
            let confirm = try await browser.get("/realms/demo/account/delete")
            XCTAssertEqual(confirm.status, .ok)
            XCTAssertTrue(confirm.contains("Delete my account"))
            let forged = try await browser.post("/realms/demo/account/delete", ["csrf": "nope"])
            XCTAssertEqual(forged.status, .forbidden)

            let deleted = try await browser.post("/realms/demo/account/delete", ["csrf": confirm.field("csrf") ?? ""])
            XCTAssertEqual(deleted.location, "/realms/demo/login?notice=account-deleted")
            let gone = try await users.user(realm: "demo", id: dana.id)
            XCTAssertNil(gone)
            let otherPage = try await other.get("/realms/demo/account")
            XCTAssertEqual(otherPage.status, .seeOther, "every session of the user ended")
            let events = try await server.runtime.audit.events(realm: "demo", limit: 50)
            XCTAssertTrue(events.contains { $0.type == .userDeleted && $0.userId == dana.id })
            let linked = try await users.user(realm: "demo", username: "dana-link")
            XCTAssertNotNil(linked, "another user is untouched")
        }
    }

    func testThePhonesOfADeletedUserGoWithIt() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let user = try await server.demoUser()
            let browser = TestBrowser(client)
            _ = try await browser.signIn()
            let waiting = try await browser.get("/realms/demo/login/push")
            let notYet = try await browser.get("/realms/demo/account/delete")
            XCTAssertEqual(notYet.status, .seeOther, "not signed in until the push step is done")
            let approved = try await device.respond(client, token: token, challengeId: try XCTUnwrap(waiting.field("challengeId")))
            XCTAssertEqual(approved.status, .ok, approved.body)
            _ = try await browser.post("/realms/demo/login/push", ["csrf": waiting.field("csrf") ?? ""])
            let service = server.runtime.pushMFA.service
            let devices = try await service.devices(realm: "demo", userId: user.id)
            XCTAssertEqual(devices.count, 1)
            let page = try await browser.get("/realms/demo/account/delete")
            XCTAssertEqual(page.status, .ok, page.html)
            _ = try await browser.post("/realms/demo/account/delete", ["csrf": page.field("csrf") ?? ""])
            let left = try await service.devices(realm: "demo", userId: user.id)
            XCTAssertTrue(left.isEmpty, "the user's phones are removed with it")
        }
    }
}
