// Test support (issue 32): an installation registered with the Devices part, its person signed in through the code
// flow with the installation's key as the DPoP key, and calls to enable push approvals on it.
import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
@testable import KeywardServer
import NIOCore
import XCTest

/// A registered installation whose person signed in on it.
struct SignedInDevice: Sendable {
    let installation: TestInstallation
    let deviceId: String
    /// The installation's key, as the DPoP key of the person's tokens.
    let key: SigningKey
    let accessToken: String
    let refreshToken: String
    let app: TestApp
}

enum OneDeviceFixture {
    static let pushPath = "/realms/demo/v1/device/push-mfa"
    static var pushURL: String { TestServer.publicURL + pushPath }

    /// Registers an installation of the iOS app (added when `addApp`, accepting a missing attestation) and signs
    /// `username` in on it through the code flow of client `app`.
    static func signedIn(
        _ server: TestServer, _ client: any TestClientProtocol, username: String = "test", password: String = "test", addApp: Bool = true
    ) async throws -> SignedInDevice {
        if addApp {
            try await DeviceFixture.addApp(server, missing: .accept)
            _ = try? await server.registerApp()
        }
        let installation = TestInstallation()
        let deviceId = try await client.registeredDevice(installation)
        return try await signIn(server, client, on: installation, deviceId: deviceId, username: username, password: password)
    }

    /// Signs `username` in on a registered installation through the code flow of client `app` (registered already),
    /// with the installation's key as the DPoP key.
    static func signIn(
        _ server: TestServer, _ client: any TestClientProtocol, on installation: TestInstallation, deviceId: String, username: String = "test",
        password: String = "test"
    ) async throws -> SignedInDevice {
        let key = try SigningKey(algorithm: .es256, pem: installation.key.pemRepresentation)
        let app = TestApp(clientId: "app", redirectURI: "com.example.app:/cb")
        let answer = try await app.authorize(TestBrowser(client), username: username, password: password, ["dpop_jkt": try key.publicJWK.thumbprint()])
        let issued = try await client.requestToken(body: app.tokenForm(code: try XCTUnwrap(answer.parameter("code"))), proofs: [try server.tokenProof(key)])
        XCTAssertEqual(issued.status, .ok, "\(issued.json)")
        return SignedInDevice(
            installation: installation, deviceId: deviceId, key: key, accessToken: try XCTUnwrap(issued.json["access_token"]?.stringValue),
            refreshToken: try XCTUnwrap(issued.json["refresh_token"]?.stringValue), app: app
        )
    }

    /// `POST …/v1/device/push-mfa` with `token` and a proof by `key`.
    static func enablePush(
        _ server: TestServer, _ client: any TestClientProtocol, token: String, key: SigningKey, body: JSONObject = ["push_provider_type": .string("log"), "push_provider_id": .string("push-token-1")],
        proof: String? = nil
    ) async throws -> JSONAnswer {
        let proof = try proof ?? server.resourceProof(key, token: token, url: pushURL, method: "POST")
        return try await client.postJSON(pushPath, body, headers: [.authorization: "DPoP " + token, HTTPField.Name("DPoP")!: proof])
    }

    /// The push-MFA device API's view of `device`: a scripted phone of the demo user whose key is the device key.
    static func phone(_ server: TestServer, _ device: SignedInDevice) async throws -> TestDevice {
        var phone = try TestDevice(server: server, userId: try await server.demoUser().id, algorithm: .es256, deviceId: device.deviceId, credentialId: device.deviceId)
        phone.key = device.key
        return phone
    }

    /// An installation the demo user signed in on, with push approvals turned on with its key, and its phone.
    static func signedInWithPush(_ server: TestServer, _ client: any TestClientProtocol) async throws -> (SignedInDevice, TestDevice) {
        let device = try await signedIn(server, client)
        let enabled = try await enablePush(server, client, token: device.accessToken, key: device.key)
        XCTAssertEqual(enabled.status, .created, "\(enabled.json)")
        return (device, try await phone(server, device))
    }
}
