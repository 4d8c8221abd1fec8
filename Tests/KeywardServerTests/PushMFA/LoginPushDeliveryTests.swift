// Tests: a login push goes out through APNs, an unregistered token marks the device, text follows the language.
import Foundation
import HummingbirdTesting
import KeywardJOSE
@testable import KeywardServer
import XCTest

/// A login's push goes out through the sender the device chose: here APNs, to the HTTP/2 double, which answers
/// 410 Unregistered; Keyward then marks the device's push token invalid and counts the delivery.
final class LoginPushDeliveryTests: XCTestCase {
    func testLoginPushReachesAPNsAndUnregisteredMarksTheDevice() async throws {
        let unregistered = #"{"match": "/3/device/", "status": 410, "body": {"reason": "Unregistered"}}"#
        try await withAPNsDevice(rules: [unregistered]) { server, client, user, device, deviceToken, double in
            try await server.settings { try $0.apply("notificationTitle", "Anmeldung") }
            guard case .created(let challenge, _, _, let confirmToken) = try await server.startLogin() else { return XCTFail("no challenge") }

            // The push runs beside the login page's response; wait for its effect (a bound, not a measurement).
            var marked = false
            for _ in 0..<200 where !marked {
                try await Task.sleep(for: .milliseconds(25))
                marked = try await server.runtime.pushMFA.service.devices(realm: "demo", userId: user.id).first { $0.deviceId == device.deviceId }?.pushTokenValid == false
            }
            XCTAssertTrue(marked, "410 Unregistered must mark the device's push token invalid")
            let record = try XCTUnwrap(try double.records().last { $0.path == "/3/device/\(deviceToken)" })
            XCTAssertEqual(record.httpVersion, "2")
            XCTAssertEqual(record.header("apns-push-type"), "alert")
            XCTAssertEqual(record.header("apns-topic"), "com.example.keyward")
            let payload = try StrictJSON.parseObject(Array(record.body.utf8))
            XCTAssertEqual(payload["token"]?.stringValue, confirmToken)
            XCTAssertEqual(payload["aps"]?.objectValue?["alert"]?.objectValue, ["title": "Anmeldung", "body": "Please confirm your login"], "the realm's title")
            XCTAssertEqual(try JWS.parse(confirmToken).claims()["cid"]?.stringValue, challenge.id)
            let metrics = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            XCTAssertTrue(metrics.contains(#"keyward_push_deliveries_total{provider="apns",outcome="unregistered"} 1"#), metrics)

            // A new push-provider registration makes the token valid again.
            let token = try await device.accessToken(client)
            _ = try await device.call(client, .put, "/device/push-provider", token: token, json: ["pushProviderId": "fresh-token"])
            let refreshed = try await server.runtime.pushMFA.service.devices(realm: "demo", userId: user.id).first { $0.deviceId == device.deviceId }
            XCTAssertEqual(refreshed?.pushTokenValid, true)
        }
    }

    /// The browser's Accept-Language picks the realm's text in that language (by primary subtag here); a field
    /// with no text in any accepted language keeps the default.
    func testTheLoginBrowsersLanguagePicksTheNotificationText() async throws {
        try await withAPNsDevice(rules: []) { server, client, _, _, deviceToken, double in
            try await server.settings { settings in
                try settings.apply("notificationTitle", "Sign-in request")
                try settings.apply("notificationTitle.de", "Anmeldung bestätigen")
                try settings.apply("notificationTitle.fr", "Connexion")
            }

            let browser = TestBrowser(client, acceptLanguage: "it;q=0.9, de-AT, fr;q=0.8")
            let afterPassword = try await browser.signIn(query: "?client_id=test-app")
            XCTAssertEqual(afterPassword.location, "/realms/demo/login/push")
            let waiting = try await browser.get("/realms/demo/login/push")
            XCTAssertEqual(waiting.status, .ok)

            var record: PushDoubleRecord?
            for _ in 0..<200 where record == nil {
                try await Task.sleep(for: .milliseconds(25))
                record = try double.records().last { $0.path == "/3/device/\(deviceToken)" }
            }
            let payload = try StrictJSON.parseObject(Array(try XCTUnwrap(record, "no push reached the double").body.utf8))
            XCTAssertEqual(
                payload["aps"]?.objectValue?["alert"]?.objectValue, ["title": "Anmeldung bestätigen", "body": "Please confirm your login"],
                "de-AT (quality 1) beats it and fr; it has no text; the body has no German text"
            )
        }
    }

    /// Both engines: the demo user with one device enrolled for APNs (a random device token), and an APNs double
    /// (HTTP/2, TLS with its own CA) answering by `rules` that the server is configured to use.
    private func withAPNsDevice(
        rules: [String],
        _ body: @escaping @Sendable (TestServer, any TestClientProtocol, User, TestDevice, String, PushDoubleProcess) async throws -> Void
    ) async throws {
        let double = try PushDoubleProcess(script: "apns_double.py", rules: rules) { directory in
            ["--ca-out", directory.appendingPathComponent("ca.pem").path]
        }
        defer { double.stop() }
        let p8 = try PushTestKeys.writeP8(in: double.directory)
        try await TestServer.forEachEngine(configure: { configuration in
            configuration.apnsURL = "https://127.0.0.1:\(double.port)"
            configuration.apnsTeamId = "TEAM123456"
            configuration.apnsKeyId = "KEY987654"
            configuration.apnsKeyFile = p8.path
            configuration.apnsTopic = "com.example.keyward"
            configuration.apnsCAFile = double.directory.appendingPathComponent("ca.pem").path
        }) { server, client in
            let user = try await server.demoUser()
            let device = try TestDevice(server: server, userId: user.id, algorithm: .es256)
            let deviceToken = "0a1b2c3d4e5f" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            let enrolled = try await device.enroll(
                client, enrollmentToken: try await server.startEnrollment(user).enrollmentToken,
                overrides: ["pushProviderType": "apns", "pushProviderId": .string(deviceToken)]
            )
            XCTAssertEqual(enrolled.status, .ok, enrolled.body)
            try await body(server, client, user, device, deviceToken, double)
        }
    }
}
