// Tests: the admin API's providers, host-token issuers, device apps, signing keys and audit events.
import Foundation
import HTTPTypes
import KeywardJOSE
import KeywardServer
import XCTest

final class AdminResourceAPITests: XCTestCase {
    func testIdentityProviders() async throws {
        try await TestServer.forEachEngine { server, client in
            let admin = try await AdminClient.make(server, client, scopes: [.providersRead, .providersWrite, .usersWrite])
            let added = try await admin.call(.post, "/admin/realms/demo/providers", json: [
                "alias": .string("corp"), "type": .string("oidc"), "issuer": .string("https://login.corp.example"),
                "client_id": .string("keyward"), "client_secret": .string("s3cret-value"), "scopes": .array([.string("openid"), .string("email")]),
            ])
            XCTAssertEqual(added.status, .created, "\(added.json)")
            XCTAssertEqual(added.json["has_client_secret"], .bool(true))
            XCTAssertNil(added.json["client_secret"], "a secret never comes back")
            XCTAssertEqual(added.json["redirect_uri"]?.stringValue, TestServer.publicURL + "/realms/demo/v1/auth/corp/callback")
            let listed = try await admin.call(.get, "/admin/realms/demo/providers")
            XCTAssertEqual(listed.json["items"]?.arrayValue?.compactMap { $0.objectValue?["alias"]?.stringValue }, ["corp"])
            let twice = try await admin.call(.post, "/admin/realms/demo/providers", json: [
                "alias": .string("corp"), "type": .string("oidc"), "issuer": .string("https://login.corp.example"), "client_id": .string("x"),
            ])
            XCTAssertEqual(twice.status, .conflict)
            let noIssuer = try await admin.call(.post, "/admin/realms/demo/providers", json: ["alias": .string("other"), "type": .string("oidc"), "client_id": .string("x")])
            XCTAssertEqual(noIssuer.status, .badRequest)
            XCTAssertEqual(noIssuer.json["field"]?.stringValue, "issuer")
            let badType = try await admin.call(.post, "/admin/realms/demo/providers", json: ["alias": .string("x"), "type": .string("saml"), "client_id": .string("x")])
            XCTAssertEqual(badType.json["field"]?.stringValue, "type")
            let status1 = try await admin.call(.delete, "/admin/realms/demo/providers/corp").status
            XCTAssertEqual(status1, .noContent)
            let status2 = try await admin.call(.get, "/admin/realms/demo/providers/corp").status
            XCTAssertEqual(status2, .notFound)
        }
    }

    func testHostTokenIssuersAndEnrolment() async throws {
        try await TestServer.forEachEngine { server, client in
            let admin = try await AdminClient.make(server, client, scopes: [.issuersRead, .issuersWrite, .usersWrite])
            let added = try await admin.call(.post, "/admin/realms/demo/issuers", json: [
                "issuer": .string("https://host.example/auth"), "jwks_url": .string("https://host.example/jwks.json"),
                "algorithms": .array([.string("ES256")]), "max_lifetime": .number(600),
            ])
            XCTAssertEqual(added.status, .created, "\(added.json)")
            let id = try XCTUnwrap(added.json["id"]?.stringValue)
            XCTAssertEqual(added.headers[.location], "/admin/realms/demo/issuers/\(id)")
            let changed = try await admin.call(.patch, "/admin/realms/demo/issuers/\(id)", json: ["leeway": .number(10), "clients": .array([.string("push-device-client")])])
            XCTAssertEqual(changed.status, .ok, "\(changed.json)")
            XCTAssertEqual(changed.json["leeway"]?.intValue, 10)
            XCTAssertEqual(changed.json["max_lifetime"]?.intValue, 600, "what the PATCH did not name stays")
            XCTAssertEqual(changed.json["jwks_url"]?.stringValue, "https://host.example/jwks.json")
            let bad = try await admin.call(.patch, "/admin/realms/demo/issuers/\(id)", json: ["max_lifetime": .number(999_999)])
            XCTAssertEqual(bad.status, .badRequest)
            XCTAssertEqual(bad.json["field"]?.stringValue, "max_lifetime")

            let enrolled = try await admin.call(.post, "/admin/realms/demo/issuers/\(id)/enrollments", json: ["subjects": .array([.string("E-1001"), .string("E-1002")])])
            XCTAssertEqual(enrolled.status, .ok, "\(enrolled.json)")
            XCTAssertEqual(enrolled.json["items"]?.arrayValue?.compactMap { $0.objectValue?["outcome"]?.stringValue }, ["enrolled", "enrolled"])
            let again = try await admin.call(.post, "/admin/realms/demo/issuers/\(id)/enrollments", json: ["subjects": .array([.string("E-1001")])])
            XCTAssertEqual(again.json["items"]?.arrayValue?.first?.objectValue?["outcome"]?.stringValue, "already_enrolled")

            let status3 = try await admin.call(.get, "/admin/realms/demo/issuers/not-base64!").status
            XCTAssertEqual(status3, .notFound)
            let status4 = try await admin.call(.delete, "/admin/realms/demo/issuers/\(id)").status
            XCTAssertEqual(status4, .noContent)
            let status5 = try await admin.call(.get, "/admin/realms/demo/issuers/\(id)").status
            XCTAssertEqual(status5, .notFound)
        }
    }

    func testDeviceAppsAndTheirDevices() async throws {
        try await TestServer.forEachEngine { server, client in
            let admin = try await AdminClient.make(server, client, scopes: [.appsRead, .appsWrite])
            let ios: JSONObject = [
                "app_id": .string("com.example.ios"), "platform": .string("ios"), "environment": .string("production"),
                "team_id": .string("ABCDE12345"), "bundle_id": .string("com.example.app"), "missing_attestation": .string("pending"),
            ]
            let added = try await admin.call(.post, "/admin/realms/demo/apps", json: ios)
            XCTAssertEqual(added.status, .created, "\(added.json)")
            XCTAssertEqual(added.json["missing_attestation"]?.stringValue, "pending")
            let twice = try await admin.call(.post, "/admin/realms/demo/apps", json: ios)
            XCTAssertEqual(twice.status, .conflict, "\(twice.json)")
            var misnamed = ios
            misnamed["app_id"] = .string("exists!")
            let invalid = try await admin.call(.post, "/admin/realms/demo/apps", json: misnamed)
            XCTAssertEqual(invalid.status, .badRequest, "an invalid id is the caller's mistake, whatever its words: \(invalid.json)")
            var changed = ios
            changed["missing_attestation"] = .string("reject")
            let put = try await admin.call(.put, "/admin/realms/demo/apps/com.example.ios", json: changed)
            XCTAssertEqual(put.status, .ok, "\(put.json)")
            XCTAssertEqual(put.json["missing_attestation"]?.stringValue, "reject")
            changed["app_id"] = .string("com.example.other")
            let mismatch = try await admin.call(.put, "/admin/realms/demo/apps/com.example.ios", json: changed)
            XCTAssertEqual(mismatch.status, .badRequest)
            let android = try await admin.call(.post, "/admin/realms/demo/apps", json: [
                "app_id": .string("com.example.android"), "platform": .string("android"), "environment": .string("production"),
                "packages": .array([.string("com.example.app")]),
            ])
            XCTAssertEqual(android.status, .badRequest, "a production Android app needs its signing certificate's digest: \(android.json)")

            let devices = try await admin.call(.get, "/admin/realms/demo/apps/com.example.ios/devices")
            XCTAssertEqual(devices.json["items"]?.arrayValue?.count, 0)

            // An app's devices are paged in the statement, by device id.
            _ = try await DeviceFixture.addApp(server, "com.example.paged", missing: .accept)
            var registered: [String] = []
            for _ in 0..<5 { registered.append(try await client.registeredDevice(TestInstallation(), appId: "com.example.paged")) }
            var listed: [String] = []
            var path = "/admin/realms/demo/apps/com.example.paged/devices?limit=2"
            for _ in 0..<5 {
                let page = try await admin.call(.get, path)
                listed += page.json["items"]?.arrayValue?.compactMap { $0.objectValue?["device_id"]?.stringValue } ?? []
                guard let next = page.json["next_cursor"]?.stringValue else { break }
                path = "/admin/realms/demo/apps/com.example.paged/devices?limit=2&cursor=\(next)"
            }
            XCTAssertEqual(listed, registered.sorted())
            let approved = try await admin.call(.post, "/admin/realms/demo/apps/com.example.paged/devices/\(registered[0])/reject")
            XCTAssertEqual(approved.status, .noContent)
            let removedDevice = try await admin.call(.delete, "/admin/realms/demo/apps/com.example.paged/devices/\(registered[1])")
            XCTAssertEqual(removedDevice.status, .noContent)
            let unknownDevice = try await admin.call(.post, "/admin/realms/demo/apps/com.example.ios/devices/nope/approve")
            XCTAssertEqual(unknownDevice.status, .notFound)
            let status6 = try await admin.call(.delete, "/admin/realms/demo/apps/com.example.ios/devices/nope").status
            XCTAssertEqual(status6, .notFound)
            let status7 = try await admin.call(.delete, "/admin/realms/demo/apps/com.example.ios").status
            XCTAssertEqual(status7, .noContent)
            let status8 = try await admin.call(.get, "/admin/realms/demo/apps/com.example.ios").status
            XCTAssertEqual(status8, .notFound)
        }
    }

    func testSigningKeysAndAuditEvents() async throws {
        try await TestServer.forEachEngine { server, client in
            let admin = try await AdminClient.make(server, client, scopes: [.keysRead, .keysWrite, .auditRead, .usersWrite])
            let before = try await admin.call(.get, "/admin/realms/demo/keys")
            XCTAssertEqual(before.json["items"]?.arrayValue?.count, 1)
            let rotated = try await admin.call(.post, "/admin/realms/demo/keys/rotate")
            XCTAssertEqual(rotated.status, .created)
            XCTAssertEqual(rotated.json["status"]?.stringValue, "active")
            let after = try await admin.call(.get, "/admin/realms/demo/keys")
            XCTAssertEqual(after.json["items"]?.arrayValue?.compactMap { $0.objectValue?["status"]?.stringValue }.sorted(), ["active", "retired"])

            for index in 0..<5 {
                server.clock.advance(by: 1)
                _ = try await admin.call(.post, "/admin/realms/demo/users", json: ["username": .string("audited-\(index)")])
            }
            var seen: [String] = []
            var path = "/admin/realms/demo/audit-events?type=UserCreated&limit=2"
            for _ in 0..<6 {
                let page = try await admin.call(.get, path)
                XCTAssertEqual(page.status, .ok, "\(page.json)")
                seen += page.json["items"]?.arrayValue?.compactMap { $0.objectValue?["details"]?.objectValue?["username"]?.stringValue } ?? []
                guard let next = page.json["next_cursor"]?.stringValue else { break }
                path = "/admin/realms/demo/audit-events?type=UserCreated&limit=2&cursor=\(next)"
            }
            XCTAssertEqual(seen, (0..<5).reversed().map { "audited-\($0)" } + ["test"], "newest first, the demo seed's user last")
            let window = try await admin.call(.get, "/admin/realms/demo/audit-events?type=UserCreated&since=\(server.clock.now().addingTimeInterval(-1).formatted(.iso8601))")
            XCTAssertEqual(window.json["items"]?.arrayValue?.count, 2)
            let changes = try await admin.call(.get, "/admin/realms/demo/audit-events?type=AdminChange&limit=200")
            let first = try XCTUnwrap(changes.json["items"]?.arrayValue?.first?.objectValue)
            XCTAssertEqual(first["client_id"]?.stringValue, "ops")
            // A cursor is the client's to send back: one forged with a time beyond any date is refused, not trusted (security
            // review of issue 33: converting it back to milliseconds trapped and took the server down).
            let forged = ["c1:9223372036854775807:x", "c1:-9223372036854775808:x", "c1:253402300800000:x"].map { "cursor=" + Base64URL.encode(Array($0.utf8)) }
            for bad in ["type=Nope", "since=yesterday", "user_id=", "cursor=" + Base64URL.encode(Array("c1:x".utf8))] + forged {
                let refused = try await admin.call(.get, "/admin/realms/demo/audit-events?" + bad)
                XCTAssertEqual(refused.status, .badRequest, bad)
            }
        }
    }
}

final class AdminSettingsAPITests: XCTestCase {
    func testPushMFAAndPasskeySettings() async throws {
        try await TestServer.forEachEngine { server, client in
            let admin = try await AdminClient.make(server, client, scopes: [.realmsRead, .realmsWrite])
            let push = try await admin.call(.patch, "/admin/realms/demo/settings/push-mfa", json: [
                "maxDevicesPerUser": .number(3), "waitChallengeEnabled": .bool(true), "userVerification": .string("number-match"),
            ])
            XCTAssertEqual(push.status, .ok, "\(push.json)")
            XCTAssertEqual(push.json["maxDevicesPerUser"]?.intValue, 3)
            let stored = try await server.runtime.pushMFA.service.settings(realm: "demo")
            XCTAssertEqual(stored.maxDevicesPerUser, 3)
            let refused = try await admin.call(.patch, "/admin/realms/demo/settings/push-mfa", json: ["maxDevicesPerUser": .number(2), "userVerification": .string("telepathy")])
            XCTAssertEqual(refused.status, .badRequest)
            XCTAssertEqual(refused.json["field"]?.stringValue, "userVerification")
            let unchanged = try await server.runtime.pushMFA.service.settings(realm: "demo")
            XCTAssertEqual(unchanged.maxDevicesPerUser, 3, "a refused member saves nothing")
            let unknown = try await admin.call(.patch, "/admin/realms/demo/settings/push-mfa", json: ["colour": .string("blue")])
            XCTAssertEqual(unknown.status, .badRequest)

            let passkeys = try await admin.call(.patch, "/admin/realms/demo/settings/passkeys", json: [
                "mode": .string("optional"), "origins": .array([.string("https://shop.example.com")]), "secondStep": .bool(true),
            ])
            XCTAssertEqual(passkeys.status, .ok, "\(passkeys.json)")
            XCTAssertEqual(passkeys.json["mode"]?.stringValue, "optional")
            XCTAssertEqual(passkeys.json["origins"], .array([.string("https://shop.example.com")]))
            let read = try await admin.call(.get, "/admin/realms/demo/settings/passkeys")
            XCTAssertEqual(read.json["secondStep"], .bool(true))
            let badOrigin = try await admin.call(.patch, "/admin/realms/demo/settings/passkeys", json: ["origins": .array([.string("http://shop.example.com/path")])])
            XCTAssertEqual(badOrigin.status, .badRequest)
            XCTAssertEqual(badOrigin.json["field"]?.stringValue, "origins")
            let reader = try await AdminClient.make(server, client, clientId: "reader", scopes: [.realmsRead])
            let forbidden = try await reader.call(.patch, "/admin/realms/demo/settings/passkeys", json: ["mode": .string("off")])
            XCTAssertEqual(forbidden.status, .forbidden)
        }
    }
}

final class AdminUserHoldingsAPITests: XCTestCase {
    func testPushDevicesAndPasskeysOfAUser() async throws {
        try await TestServer.forEachEngine { server, client in
            let admin = try await AdminClient.make(server, client, scopes: [.usersRead, .usersWrite])
            let user = try await server.demoUser()
            _ = try await server.enrolledDevice(client)
            let phones = try await admin.call(.get, "/admin/realms/demo/users/\(user.id)/push-devices")
            XCTAssertEqual(phones.status, .ok, "\(phones.json)")
            let phone = try XCTUnwrap(phones.json["items"]?.arrayValue?.first?.objectValue)
            let credential = try XCTUnwrap(phone["id"]?.stringValue)
            let removed = try await admin.call(.delete, "/admin/realms/demo/users/\(user.id)/push-devices/\(credential)")
            XCTAssertEqual(removed.status, .noContent)
            let after = try await server.runtime.pushMFA.service.devices(realm: "demo", userId: user.id)
            XCTAssertTrue(after.isEmpty)
            let again = try await admin.call(.delete, "/admin/realms/demo/users/\(user.id)/push-devices/\(credential)")
            XCTAssertEqual(again.status, .notFound)

            try await PasskeyFixture.enable(server)
            let browser = TestBrowser(client)
            _ = try await PasskeyFixture.register(browser, try PasskeyFixture.authenticator(), name: "Laptop")
            let passkeys = try await admin.call(.get, "/admin/realms/demo/users/\(user.id)/passkeys")
            let passkey = try XCTUnwrap(passkeys.json["items"]?.arrayValue?.first?.objectValue)
            XCTAssertEqual(passkey["name"]?.stringValue, "Laptop")
            let id = try XCTUnwrap(passkey["credential_id"]?.stringValue)
            let gone = try await admin.call(.delete, "/admin/realms/demo/users/\(user.id)/passkeys/\(id)")
            XCTAssertEqual(gone.status, .noContent, "the user still has a password: \(gone.json)")
            let devices = try await admin.call(.get, "/admin/realms/demo/users/\(user.id)/devices")
            XCTAssertEqual(devices.json["items"]?.arrayValue?.count, 0)
            let nobody = try await admin.call(.get, "/admin/realms/demo/users/nobody/passkeys")
            XCTAssertEqual(nobody.status, .notFound)
        }
    }
}
