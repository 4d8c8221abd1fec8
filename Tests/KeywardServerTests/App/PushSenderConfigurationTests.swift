// Tests: push sender settings are read at start-up, and one that cannot work stops the server naming it.
import Foundation
import Logging
@testable import KeywardServer
import XCTest

/// Push senders are configured at start-up: a setting that cannot work stops the server with its name.
final class PushSenderConfigurationTests: XCTestCase {
    func testSettingsAreReadFromTheEnvironment() async throws {
        let configuration = try await KeywardConfiguration.load(environment: [
            "KEYWARD_PUSH_FCM_URL": "https://fcm.googleapis.com/v1/projects/demo/messages:send",
            "GOOGLE_APPLICATION_CREDENTIALS": "/etc/keyward/fcm.json",
            "KEYWARD_PUSH_APNS_TEAM_ID": "TEAM123456", "KEYWARD_PUSH_APNS_KEY_ID": "KEY1234567",
            "KEYWARD_PUSH_APNS_KEY_FILE": "/etc/keyward/apns.p8", "KEYWARD_PUSH_APNS_TOPIC": "com.example.app",
        ])
        XCTAssertEqual(configuration.fcmSettings?.serviceAccountFile, "/etc/keyward/fcm.json")
        XCTAssertEqual(configuration.apnsSettings?.topic, "com.example.app")
        XCTAssertEqual(configuration.apnsSettings?.url, "https://api.push.apple.com")
        let none = try await KeywardConfiguration.load(environment: [:])
        XCTAssertNil(none.fcmSettings)
        XCTAssertNil(none.apnsSettings)
    }

    func testUnreadableKeyFilesStopStartUp() async throws {
        for (change, setting) in [
            ({ (c: inout KeywardConfiguration) in c.fcmURL = "https://fcm.googleapis.com/v1/projects/x/messages:send"; c.fcmServiceAccountFile = "/nonexistent/fcm.json" }, "push.fcm.serviceAccountFile"),
            ({ (c: inout KeywardConfiguration) in c.apnsTeamId = "T"; c.apnsKeyId = "K"; c.apnsTopic = "com.example"; c.apnsKeyFile = "/nonexistent/key.p8" }, "push.apns.keyFile"),
            ({ (c: inout KeywardConfiguration) in c.apnsTeamId = "T"; c.apnsKeyFile = "/nonexistent/key.p8"; c.apnsTopic = "com.example" }, "push.apns.keyId"),
        ] {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kw-push-config-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            var configuration = KeywardConfiguration()
            configuration.dataDirectory = directory.path
            change(&configuration)
            do {
                let runtime = try await KeywardRuntime.start(configuration: configuration, logger: Logger(label: "test"))
                try await runtime.shutdown()
                XCTFail("started with a broken \(setting)")
            } catch let error as ConfigurationError {
                XCTAssertEqual(error.setting, setting, error.description)
            }
        }
    }

    func testProxyVariablesAreKeptAndABadOneStopsStartUpNamingIt() async throws {
        let loaded = try await KeywardConfiguration.load(environment: [
            "https_proxy": "http://proxy.corp:3128", "NO_PROXY": "localhost", "HOME": "/root", "KEYWARD_PORT": "8080",
        ])
        XCTAssertEqual(loaded.proxyEnvironment, ["https_proxy": "http://proxy.corp:3128", "NO_PROXY": "localhost"])

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kw-push-proxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let account = try PushTestKeys.writeServiceAccount(in: directory, tokenURI: "https://oauth2.googleapis.com/token")
        var configuration = KeywardConfiguration()
        configuration.dataDirectory = directory.path
        configuration.fcmURL = "https://fcm.googleapis.com/v1/projects/x/messages:send"
        configuration.fcmServiceAccountFile = account.path
        configuration.proxyEnvironment = ["HTTPS_PROXY": "https://proxy.corp:3128"]
        do {
            let runtime = try await KeywardRuntime.start(configuration: configuration, logger: Logger(label: "test"))
            try await runtime.shutdown()
            XCTFail("started with a proxy AsyncHTTPClient cannot use")
        } catch let error as ConfigurationError {
            XCTAssertEqual(error.environmentVariable, "HTTPS_PROXY")
            XCTAssertTrue(error.description.hasPrefix("invalid configuration: push proxy (env HTTPS_PROXY): the proxy for push.fcm.url"), error.description)
        }

        configuration.proxyEnvironment = ["https_proxy": "http://proxy.corp:3128"]
        let runtime = try await KeywardRuntime.start(configuration: configuration, logger: Logger(label: "test"))
        try await runtime.shutdown()
    }
}
