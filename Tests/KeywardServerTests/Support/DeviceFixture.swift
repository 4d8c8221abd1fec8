// Test support: an app installation with a P-256 key for the device API tests, and the requests it sends.
import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
import KeywardServer
import NIOCore
import XCTest

/// An app installation for the device API tests: a P-256 key, and the requests it sends.
struct TestInstallation: Sendable {
    var key = P256.Signing.PrivateKey()
    var publicKeyText: String { Data(key.publicKey.x963Representation).base64EncodedString() }

    /// The registration body for `challenge`: the key, its proof over the challenge, and `extra` members.
    func registration(appId: String, challenge: String, platform: String = "ios", deviceId: String? = nil, extra: JSONObject = [:]) throws -> JSONObject {
        var body: JSONObject = [
            "app_id": .string(appId), "challenge": .string(challenge), "public_key": .string(publicKeyText), "platform": .string(platform),
            "proof": .string(Data(try key.signature(for: Array(challenge.utf8)).derRepresentation).base64EncodedString()),
        ]
        if let deviceId { body["device_id"] = .string(deviceId) }
        for (name, value) in extra { body[name] = value }
        return body
    }
}

extension TestInstallation {
    /// The signing headers of a request by this installation (docs: README, "Signed device requests").
    func signedHeaders(
        appId: String = DeviceFixture.iosApp, deviceId: String, method: String, target: String, body: [UInt8] = [], timestamp: Int64,
        nonce: String = UUID().uuidString
    ) throws -> HTTPFields {
        let digest = SHA256.hash(data: body).map { String(format: "%02x", $0) }.joined()
        let message = [method, target, String(timestamp), nonce, digest].joined(separator: "\n")
        let signature = try key.signature(for: Array(message.utf8))
        return [
            HTTPField.Name("X-App-ID")!: appId, HTTPField.Name("X-Device-ID")!: deviceId,
            HTTPField.Name("X-Keyward-Timestamp")!: String(timestamp), HTTPField.Name("X-Keyward-Nonce")!: nonce,
            HTTPField.Name("X-Keyward-Signature")!: Data(signature.derRepresentation).base64EncodedString(),
            HTTPField.Name("X-Keyward-Sig-Version")!: "1",
        ]
    }
}

enum DeviceFixture {
    static let iosApp = "ios-app"

    @discardableResult
    static func addApp(
        _ server: TestServer, _ appId: String = iosApp, environment: DeviceApp.Environment = .production,
        missing: DeviceApp.AttestationPolicy = .reject, failed: DeviceApp.AttestationPolicy = .reject, devBypass: Bool = false
    ) async throws -> DeviceApp {
        try await server.runtime.devices.apps.add(DeviceAppService.Registration(
            realm: "demo", appId: appId, platform: .ios, environment: environment, teamId: "ABCDE12345", bundleId: "com.example.keyward",
            missingAttestation: missing, failedAttestation: failed, devBypass: devBypass
        ))
    }
}

typealias JSONAnswer = (status: HTTPResponse.Status, json: JSONObject, headers: HTTPFields)

extension TestClientProtocol {
    func postJSON(_ path: String, _ body: JSONObject, headers extra: HTTPFields = [:]) async throws -> JSONAnswer {
        try await postRaw(path, bytes: StrictJSON.serialize(body), headers: extra)
    }

    func postRaw(_ path: String, bytes: [UInt8], contentType: String = "application/json", headers extra: HTTPFields = [:]) async throws -> JSONAnswer {
        var headers: HTTPFields = [.contentType: contentType]
        headers.append(contentsOf: extra)
        return try await execute(uri: path, method: .post, headers: headers, body: ByteBuffer(bytes: bytes)) { response in
            (response.status, (try? StrictJSON.parseObject(response.body.readableBytesView)) ?? [:], response.headers)
        }
    }

    /// A fresh challenge for `appId` in the demo realm; fails the test when refused.
    func deviceChallenge(_ appId: String = DeviceFixture.iosApp) async throws -> String {
        let answer = try await postJSON("/realms/demo/v1/device/challenge", ["app_id": .string(appId)])
        XCTAssertEqual(answer.status, .ok, "challenge refused: \(answer.json)")
        return try XCTUnwrap(answer.json["challenge"]?.stringValue)
    }

    func deviceStatus(headers: HTTPFields, target: String = "/realms/demo/v1/device/status") async throws -> JSONAnswer {
        try await execute(uri: target, method: .get, headers: headers) { response in
            (response.status, (try? StrictJSON.parseObject(response.body.readableBytesView)) ?? [:], response.headers)
        }
    }

    /// Registers `installation` (the app's policy must accept a missing attestation); returns the device id.
    func registeredDevice(_ installation: TestInstallation, appId: String = DeviceFixture.iosApp) async throws -> String {
        let answer = try await registerDevice(try installation.registration(appId: appId, challenge: try await deviceChallenge(appId)))
        XCTAssertEqual(answer.status, .created, "registration refused: \(answer.json)")
        return try XCTUnwrap(answer.json["device_id"]?.stringValue)
    }

    func registerDevice(_ body: JSONObject, headers: HTTPFields = [:]) async throws -> JSONAnswer {
        try await postJSON("/realms/demo/v1/device/register", body, headers: headers)
    }
}
