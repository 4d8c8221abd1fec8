// Tests: every refusal of push-MFA device DPoP authentication, and HTML error pages for browsers.
import Foundation
import HTTPTypes
import KeywardJOSE
@testable import KeywardServer
import XCTest

/// docs/PUSH-MFA-PROTOCOL.md §3.2: every refusal of DPoP device authentication, with the original's status and message.
final class DeviceAuthenticationRefusalTests: XCTestCase {
    func testEveryDeviceAuthenticationRefusal() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let (other, otherToken) = try await server.enrolledDevice(client)
            let stranger = try await server.runtime.accounts.users.createUser(realm: "demo", username: "stranger", password: "pw")
            let path = "/login/pending?userId=\(device.userId)"
            let url = device.base + "/login/pending"
            let dpop = HTTPField.Name("DPoP")!
            func get(_ headers: HTTPFields) async throws -> PushAnswer { try await client.push(path, method: .get, headers: headers) }
            func proof(_ claims: JSONObject = [:], signer: SigningKey? = nil, method: String = "GET", url target: String? = nil, at: Date? = nil, accessToken: String? = token) throws -> String {
                try device.proof(method: method, url: target ?? url, accessToken: accessToken, extraClaims: claims, signWith: signer, issuedAt: at)
            }
            let expired = try JWS.sign(header: ["typ": "at+jwt"], claims: ["sub": "x"], key: try SigningKey.generate(.es256))
            let now = server.clock.now()

            var cases: [(String, HTTPFields, HTTPResponse.Status, String)] = [
                ("no Authorization", [dpop: try proof()], .unauthorized, "DPoP access token required"),
                ("Basic scheme", [.authorization: "Basic abc", dpop: try proof()], .unauthorized, "DPoP access token required"),
                ("foreign token", [.authorization: "DPoP " + expired, dpop: try proof()], .unauthorized, "Invalid access token"),
                ("no DPoP header", [.authorization: "DPoP " + token], .unauthorized, "DPoP proof required"),
                ("Bearer without proof", [.authorization: "Bearer " + token], .unauthorized, "DPoP proof required"),
                ("garbage proof", [.authorization: "DPoP " + token, dpop: "not.a.jwt"], .badRequest, "Invalid DPoP proof"),
                ("htm mismatch", [.authorization: "DPoP " + token, dpop: try proof(method: "POST")], .forbidden, "DPoP proof htm mismatch"),
                ("htu mismatch", [.authorization: "DPoP " + token, dpop: try proof(url: device.base + "/login/lockout")], .forbidden, "DPoP proof htu mismatch"),
                ("iat too old", [.authorization: "DPoP " + token, dpop: try proof(at: now.addingTimeInterval(-121))], .badRequest, "DPoP proof expired"),
                ("iat in the future", [.authorization: "DPoP " + token, dpop: try proof(at: now.addingTimeInterval(121))], .badRequest, "DPoP proof expired"),
                ("no sub", [.authorization: "DPoP " + token, dpop: try proof(["sub": .null])], .badRequest, "Missing field: sub"),
                ("no deviceId", [.authorization: "DPoP " + token, dpop: try proof(["deviceId": .null])], .badRequest, "Missing field: deviceId"),
                ("long deviceId", [.authorization: "DPoP " + token, dpop: try proof(["deviceId": .string(String(repeating: "d", count: 129))])], .badRequest, "Field too long: deviceId"),
                ("unknown user", [.authorization: "DPoP " + token, dpop: try proof(["sub": "nobody"])], .notFound, "User not found"),
                ("unknown device", [.authorization: "DPoP " + token, dpop: try proof(["deviceId": "unknown"])], .forbidden, "Device not registered for user"),
                // The device exists, but is another user's: user and device are looked up together.
                ("another user's device", [.authorization: "DPoP " + token, dpop: try proof(["sub": .string(stranger.id)])], .forbidden, "Device not registered for user"),
                ("another device's key", [.authorization: "DPoP " + token, dpop: try proof(signer: other.key)], .forbidden, "Invalid DPoP proof signature"),
                ("alg that does not fit the stored key", [.authorization: "DPoP " + token, dpop: try proof(signer: try SigningKey.generate(.es256))], .badRequest, "JWK algorithm mismatch"),
                ("another device's token", [.authorization: "DPoP " + otherToken, dpop: try proof(accessToken: otherToken)], .forbidden, "Access token DPoP binding mismatch"),
                ("no ath", [.authorization: "DPoP " + token, dpop: try proof(accessToken: nil)], .badRequest, "Missing field: ath"),
                ("ath mismatch", [.authorization: "DPoP " + token, dpop: try proof(["ath": .string(DPoPProof.accessTokenHash(otherToken))], accessToken: nil)], .forbidden, "DPoP proof ath mismatch"),
                ("long jti", [.authorization: "DPoP " + token, dpop: try proof(["jti": .string(String(repeating: "j", count: 129))])], .badRequest, "Field too long: jti"),
            ]
            // A token from the client-credentials grant without a DPoP binding.
            let unbound = try await server.runtime.oauth.clients.createClient(realm: "demo", clientId: "plain", secret: "plain-secret", requireDPoP: false)
            _ = unbound
            let plain = try await client.requestToken(body: "grant_type=client_credentials&client_id=plain&client_secret=plain-secret", proofs: [])
            let plainToken = try XCTUnwrap(plain.json["access_token"]?.stringValue)
            cases.append(("unbound token", [.authorization: "DPoP " + plainToken, dpop: try proof(accessToken: plainToken)], .forbidden, "Access token missing DPoP binding"))

            for (name, headers, status, message) in cases {
                let answer = try await get(headers)
                XCTAssertEqual(answer.status, status, "\(name): \(answer.body)")
                if status == .unauthorized {
                    XCTAssertEqual(answer.error, "HTTP 401 Unauthorized", name)
                    XCTAssertEqual(answer.headers[.wwwAuthenticate], "DPoP error_description=\"\(message)\"", name)
                } else {
                    XCTAssertEqual(answer.error, message, name)
                }
                XCTAssertEqual(answer.headers[.contentType], "application/json", name)
            }
            // Every refusal is counted; the audit keeps one row per reason a minute (RefusalAuditSampler).
            let metrics = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            let counted = metrics.split(separator: "\n").filter { $0.hasPrefix("keyward_dpop_rejections_total{") && $0.contains("endpoint=\"push-mfa\"") }
                .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
            XCTAssertEqual(Int(counted), cases.count)
            let events = try await server.runtime.audit.events(realm: "demo", limit: 500)
            XCTAssertTrue((1...cases.count).contains(events.filter { $0.type == .dpopAuthenticationFailed }.count))
        }
    }

    func testReplayedProofIsRefusedAndBearerWithProofIsAccepted() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let url = device.base + "/login/pending"
            let proof = try device.proof(method: "GET", url: url, accessToken: token)
            let headers: HTTPFields = [.authorization: "Bearer " + token, HTTPField.Name("DPoP")!: proof]
            let first = try await client.push("/login/pending?userId=\(device.userId)", method: .get, headers: headers)
            XCTAssertEqual(first.status, .ok, "Bearer plus a proof is the original's backward-compatible form: \(first.body)")
            let replay = try await client.push("/login/pending?userId=\(device.userId)", method: .get, headers: headers)
            XCTAssertEqual(replay.status, .forbidden)
            XCTAssertEqual(replay.error, "DPoP proof replay detected")
        }
    }

    /// `pushMfa.requireAth = false`: a proof without `ath` passes, but an `ath` that is present is still checked.
    func testAthSwitchForOldSimulators() async throws {
        try await TestServer.forEachEngine(configure: { $0.pushMfaRequireAth = false }) { server, client in
            let (device, token) = try await server.enrolledDevice(client)
            let url = device.base + "/login/pending"
            let without = try device.proof(method: "GET", url: url)
            let ok = try await client.push("/login/pending?userId=\(device.userId)", method: .get, headers: [.authorization: "DPoP " + token, HTTPField.Name("DPoP")!: without])
            XCTAssertEqual(ok.status, .ok, ok.body)
            let wrong = try device.proof(method: "GET", url: url, extraClaims: ["ath": "AAAA"])
            let refused = try await client.push("/login/pending?userId=\(device.userId)", method: .get, headers: [.authorization: "DPoP " + token, HTTPField.Name("DPoP")!: wrong])
            XCTAssertEqual(refused.error, "DPoP proof ath mismatch")
        }
    }

    func testPendingNeedsUserIdBeforeAuthentication() async throws {
        try await TestServer.forEachEngine { _, client in
            let answer = try await client.push("/login/pending", method: .get)
            XCTAssertEqual(answer.status, .badRequest)
            XCTAssertEqual(answer.error, "Missing field: userId")
        }
    }
}

/// docs/PUSH-MFA-PROTOCOL.md §2.1: a browser that prefers HTML gets the refusal as a page with the same status; `*/*` gets JSON.
final class DeviceErrorNegotiationTests: XCTestCase {
    func testBrowsersGetAnHTMLErrorPageWithTheSameStatus() async throws {
        try await TestServer.forEachEngine { server, client in
            let (device, _) = try await server.enrolledDevice(client)
            let browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
            let page = try await client.push("/login/pending?userId=\(device.userId)", method: .get, headers: [.accept: browserAccept])
            XCTAssertEqual(page.status, .unauthorized)
            XCTAssertEqual(page.headers[.contentType], "text/html; charset=utf-8")
            XCTAssertEqual(page.headers[.wwwAuthenticate], "DPoP error_description=\"DPoP access token required\"")
            XCTAssertNotNil(page.headers[.contentSecurityPolicy])
            XCTAssertTrue(page.body.contains("DPoP access token required"), page.body)
            XCTAssertFalse(page.body.contains("{\"error\""), page.body)

            let missing = try await client.push("/login/pending", method: .get, headers: [.accept: browserAccept])
            XCTAssertEqual(missing.status, .badRequest)
            XCTAssertTrue(missing.body.contains("Missing field: userId"), missing.body)
            XCTAssertEqual(missing.headers[.contentType], "text/html; charset=utf-8")

            let scripted = try await client.push("/login/pending?userId=\(device.userId)", method: .get, headers: [.accept: "*/*"])
            XCTAssertEqual(scripted.status, .unauthorized)
            XCTAssertEqual(scripted.headers[.contentType], "application/json")
            XCTAssertEqual(scripted.error, "HTTP 401 Unauthorized")
        }
    }
}
