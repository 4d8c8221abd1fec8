// Tests: bad FCM and APNs settings fail when the sender is built, naming the setting and the file.
import Foundation
import KeywardJOSE
import XCTest
@testable import KeywardServer

/// Bad push configuration fails when the sender is built (start-up), naming the setting and the file.
final class PushSettingsLoadingTests: XCTestCase {
    private var directory: URL!
    private let logs = PushLogCapture()

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-push-settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
        super.tearDown()
    }

    private let fcmURL = "https://fcm.googleapis.com/v1/projects/keyward-test/messages:send"

    private func fcmError(serviceAccountFile: String, url: String? = nil) -> String? {
        do {
            _ = try FCMPushSender(settings: FCMSettings(url: url ?? fcmURL, serviceAccountFile: serviceAccountFile), logger: logs.logger())
            return nil
        } catch {
            return error.description
        }
    }

    private func apnsError(_ settings: APNsSettings) async -> String? {
        do {
            let sender = try APNsPushSender(settings: settings, logger: logs.logger())
            await sender.shutdown()
            return nil
        } catch {
            return error.description
        }
    }

    private func serviceAccount(replacing member: String, with value: String?) throws -> String {
        let valid = try PushTestKeys.writeServiceAccount(in: directory, tokenURI: "https://oauth2.googleapis.com/token")
        var object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: valid.path))) as? [String: String])
        object[member] = value
        return try PushTestKeys.writeJSON(object, in: directory)
    }

    func testAValidServiceAccountLoads() throws {
        let account = try PushTestKeys.writeServiceAccount(in: directory, tokenURI: "https://oauth2.googleapis.com/token")
        XCTAssertNil(fcmError(serviceAccountFile: account.path))
    }

    func testServiceAccountProblemsNameTheSettingAndTheFile() throws {
        let missing = directory.appendingPathComponent("nope.json").path
        XCTAssertEqual(fcmError(serviceAccountFile: missing),
                       "push.fcm.serviceAccountFile: \(missing): cannot be read (no such file)")
        XCTAssertEqual(fcmError(serviceAccountFile: ""), "push.fcm.serviceAccountFile: not set")

        let notJSON = try PushTestKeys.write("client_email: x", in: directory, suffix: ".json")
        XCTAssertEqual(fcmError(serviceAccountFile: notJSON)?.hasPrefix("push.fcm.serviceAccountFile: \(notJSON): not a JSON object"), true)

        for member in ["private_key", "client_email", "token_uri"] {
            let path = try serviceAccount(replacing: member, with: nil)
            XCTAssertEqual(fcmError(serviceAccountFile: path), "push.fcm.serviceAccountFile: \(path): no \(member)")
        }

        let wrongType = try serviceAccount(replacing: "type", with: "authorized_user")
        XCTAssertEqual(fcmError(serviceAccountFile: wrongType),
                       "push.fcm.serviceAccountFile: \(wrongType): type is \"authorized_user\", not \"service_account\"")

        let badTokenURI = try serviceAccount(replacing: "token_uri", with: "oauth2.googleapis.com/token")
        XCTAssertEqual(fcmError(serviceAccountFile: badTokenURI),
                       "push.fcm.serviceAccountFile: \(badTokenURI): token_uri \"oauth2.googleapis.com/token\" is not an http(s) URL")
    }

    func testPrivateKeysMustBeUnencryptedPKCS8OfTheRightType() throws {
        let rsa = try SigningKey.generate(.rs256)
        let cases: [(pem: String, problem: String)] = [
            (PushTestKeys.pem(label: "RSA PRIVATE KEY", der: rsa.serialized),
             "PEM block is \"RSA PRIVATE KEY\" (PKCS#1/SEC1); convert it to PKCS#8 (\"openssl pkcs8 -topk8 -nocrypt\")"),
            (PushTestKeys.pem(label: "ENCRYPTED PRIVATE KEY", der: [0x30, 0x00]),
             "the private key is encrypted; export it without a passphrase (PKCS#8, unencrypted)"),
            (PushTestKeys.pem(label: "CERTIFICATE", der: [0x30, 0x00]),
             "PEM block is \"CERTIFICATE\"; a \"PRIVATE KEY\" (PKCS#8) block is required"),
            // PKCS#1 bytes under a PKCS#8 label: caught by the structure check, not passed on as "some key".
            (PushTestKeys.pem(label: "PRIVATE KEY", der: rsa.serialized), "the PEM body is not a PKCS#8 PrivateKeyInfo"),
            (PushTestKeys.pem(label: "PRIVATE KEY", der: try SigningKey.generate(.es256).serialized),
             "key is a P-256 EC key; an RSA key is required"),
            ("-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----\n", "PEM body is not valid base64"),
            ("-----BEGIN PRIVATE KEY-----\nMIIB\n", "PEM block has no \"-----END PRIVATE KEY-----\" line"),
            ("just text", "no PEM \"-----BEGIN PRIVATE KEY-----\" block"),
        ]
        for (pem, problem) in cases {
            let path = try serviceAccount(replacing: "private_key", with: pem)
            XCTAssertEqual(fcmError(serviceAccountFile: path), "push.fcm.serviceAccountFile: \(path): \(problem)")
        }
    }

    func testTheFCMURLIsChecked() throws {
        let account = try PushTestKeys.writeServiceAccount(in: directory, tokenURI: "https://oauth2.googleapis.com/token")
        XCTAssertEqual(fcmError(serviceAccountFile: account.path, url: "fcm.googleapis.com/v1/projects/x/messages:send"),
                       "push.fcm.url: \"fcm.googleapis.com/v1/projects/x/messages:send\" is not an http or https URL like "
                       + "https://fcm.googleapis.com/v1/projects/<id>/messages:send")
    }

    func testAPNsSettingsProblemsNameTheSettingAndTheFile() async throws {
        let p8 = try PushTestKeys.writeP8(in: directory)
        func settings(url: String = APNsSettings.production, teamId: String = "TEAM123456", keyFile: String? = nil,
                      topic: String = "com.example.keyward", caFile: String? = nil) -> APNsSettings {
            APNsSettings(url: url, teamId: teamId, keyId: "KEY987654", keyFile: keyFile ?? p8.path, topic: topic, caFile: caFile)
        }
        let valid = await apnsError(settings())
        XCTAssertNil(valid)

        let rsaKey = try PushTestKeys.write(
            PushTestKeys.pem(label: "PRIVATE KEY", der: PushTestKeys.pkcs8(rsaPKCS1: SigningKey.generate(.rs256).serialized)),
            in: directory, suffix: ".p8")
        let sec1 = try PushTestKeys.write(PushTestKeys.pem(label: "EC PRIVATE KEY", der: [0x30, 0x00]), in: directory, suffix: ".p8")
        let missing = directory.appendingPathComponent("AuthKey_missing.p8").path
        let notCertificates = try PushTestKeys.write("not a certificate", in: directory, suffix: ".pem")

        let cases: [(APNsSettings, String)] = [
            (settings(keyFile: rsaKey), "push.apns.keyFile: \(rsaKey): key is an RSA key; a P-256 EC key is required"),
            (settings(keyFile: sec1),
             "push.apns.keyFile: \(sec1): PEM block is \"EC PRIVATE KEY\" (PKCS#1/SEC1); convert it to PKCS#8 (\"openssl pkcs8 -topk8 -nocrypt\")"),
            (settings(keyFile: missing), "push.apns.keyFile: \(missing): cannot be read (no such file)"),
            (settings(teamId: " "), "push.apns.teamId: not set"),
            (settings(topic: ""), "push.apns.topic: not set"),
            (settings(url: "http://api.push.apple.com"),
             "push.apns.url: \"http://api.push.apple.com\" is not an https URL like https://api.push.apple.com"),
            (settings(caFile: notCertificates), "push.apns.caFile: \(notCertificates): holds no readable PEM certificate"),
        ]
        for (settings, expected) in cases {
            let error = await apnsError(settings)
            XCTAssertEqual(error, expected)
        }
    }
}
