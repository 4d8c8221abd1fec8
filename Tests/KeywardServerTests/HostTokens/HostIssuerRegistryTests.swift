// Tests: host-token issuer administration: settings checked, enrolment, removal, re-registration and updates.
import Crypto
import Foundation
import KeywardJOSE
import KeywardServer
import X509
import XCTest

/// The issuer registry's administration: settings checked before anything is stored, enrolment, removal.
final class HostIssuerRegistryTests: XCTestCase {
    func testKeySourcesAreChecked() async throws {
        try await TestServer.forEachEngine { server, _ in
            let issuers = server.runtime.hostTokens.issuers
            let refused: [(HostIssuerService.Registration, String)] = [
                (.init(realm: "demo", issuer: "a", jwksURL: "http://idp.example/jwks"), "http is allowed only on a loopback address"),
                (.init(realm: "demo", issuer: "a", jwksURL: "http://10.0.0.1/jwks"), "http is allowed only on a loopback address"),
                (.init(realm: "demo", issuer: "a", jwksURL: "ftp://idp.example/jwks"), "scheme 'ftp'"),
                (.init(realm: "demo", issuer: "a", jwksURL: "https://user:pw@idp.example/jwks"), "user information"),
                (.init(realm: "demo", issuer: "a", jwksURL: "/jwks"), "not an absolute URL"),
                (.init(realm: "demo", issuer: "a"), "exactly one"),
                (.init(realm: "demo", issuer: "a", jwksURL: "https://idp.example/jwks", pemCertificates: "x"), "exactly one"),
                (.init(realm: "demo", issuer: "a", pemCertificates: "not pem"), "pem-file"),
                (.init(realm: "demo", issuer: "a", jwksURL: "https://idp.example/jwks", algorithms: ["HS256"]), "algorithms: 'HS256'"),
                (.init(realm: "demo", issuer: "a", jwksURL: "https://idp.example/jwks", algorithms: []), "at least one"),
                (.init(realm: "demo", issuer: "a", jwksURL: "https://idp.example/jwks", maxLifetime: 0), "max-lifetime"),
                (.init(realm: "demo", issuer: "a", jwksURL: "https://idp.example/jwks", leeway: 301), "leeway"),
                (.init(realm: "demo", issuer: "", jwksURL: "https://idp.example/jwks"), "issuer"),
            ]
            for (registration, problem) in refused {
                do {
                    _ = try await issuers.add(registration)
                    XCTFail("accepted \(registration)")
                } catch let error as HostIssuerError {
                    XCTAssertTrue(error.description.contains(problem), "\(error.description) should mention \(problem)")
                }
            }
            let expired = try HostTokenFixture.certificatePEM(0, notBefore: server.clock.now().addingTimeInterval(-10 * 86400), days: 1)
            do {
                _ = try await issuers.add(.init(realm: "demo", issuer: "a", pemCertificates: expired))
                XCTFail("an expired certificate was accepted")
            } catch let error as HostIssuerError {
                XCTAssertTrue(error.description.contains("expired"), error.description)
            }
            let found1 = try await issuers.list(realm: "demo")
            XCTAssertEqual(found1, [])

            for url in ["http://127.0.0.1:8080/jwks", "http://localhost/jwks", "http://[::1]:9/jwks", "https://idp.example/.well-known/jwks.json"] {
                _ = try await issuers.add(.init(realm: "demo", issuer: url, jwksURL: url))
            }
            let found2 = try await issuers.list(realm: "demo")
            XCTAssertEqual(found2.count, 4)
        }
    }

    func testEnrolmentIsIdempotentAndRemovalUnlinksButKeepsUsers() async throws {
        try await TestServer.forEachEngine { server, _ in
            let issuers = server.runtime.hostTokens.issuers
            let added = try await issuers.add(.init(realm: "demo", issuer: HostTokenFixture.issuer, jwksURL: "https://idp.example/jwks"))
            XCTAssertEqual(added.algorithms, [.rs256])
            XCTAssertEqual(added.maxLifetime, 900)
            XCTAssertTrue(added.requireJTI)
            XCTAssertFalse(added.allowBearer)

            let first = try await issuers.enroll(realm: "demo", issuer: HostTokenFixture.issuer, subjects: ["e1", "e2", "test", ""])
            guard case .enrolled(let e1) = first[0], case .enrolled = first[1] else { return XCTFail("\(first)") }
            XCTAssertNil(e1.passwordHash)
            guard case .failed(_, let taken) = first[2] else { return XCTFail("test is the demo realm's local user: \(first[2])") }
            XCTAssertTrue(taken.contains("exists"), taken)
            guard case .failed = first[3] else { return XCTFail("an empty id: \(first[3])") }

            let again = try await issuers.enroll(realm: "demo", issuer: HostTokenFixture.issuer, subjects: ["e1"])
            guard case .alreadyEnrolled(let same) = again.first, again.count == 1 else { return XCTFail("\(again)") }
            XCTAssertEqual(same.id, e1.id)
            let found3 = try await issuers.enrolled(realm: "demo", issuer: HostTokenFixture.issuer)
            XCTAssertEqual(found3.map(\.subject), ["e1", "e2"])

            do {
                _ = try await issuers.enroll(realm: "demo", issuer: "https://unknown.example", subjects: ["x"])
                XCTFail("enrolled for an unregistered issuer")
            } catch HostIssuerError.notFound {}

            let found4 = try await issuers.remove(realm: "demo", issuer: HostTokenFixture.issuer)
            XCTAssertEqual(found4, 2)
            let found5 = try await issuers.list(realm: "demo")
            XCTAssertEqual(found5, [])
            let found6 = try await server.runtime.accounts.users.user(realm: "demo", username: "e1")
            XCTAssertNotNil(found6, "users stay")
            let found7 = try await server.runtime.accounts.users.user(realm: "demo", issuer: HostTokenFixture.issuer, subject: "e1")
            XCTAssertNil(found7)
            do {
                _ = try await issuers.remove(realm: "demo", issuer: HostTokenFixture.issuer)
                XCTFail("removed twice")
            } catch HostIssuerError.notFound {}
        }
    }
}

/// Re-registering an issuer (the way to change its settings) keeps its users: enrolling them again relinks them.
final class HostIssuerReRegistrationTests: XCTestCase {
    func testRemoveAddEnrollRelinksTheUsersWithTheirIds() async throws {
        try await TestServer.forEachEngine { server, client in
            try await JWKSTestServer().run { jwks in
                jwks.serve([HostTokenFixture.publicJWK(0, kid: "k1")])
                try await HostTokenFixture.register(server, jwksURL: jwks.url)
                let issuers = server.runtime.hostTokens.issuers
                let before = try await XCTUnwrapAsync(try await server.runtime.accounts.users.user(realm: "demo", username: HostTokenFixture.subject))

                _ = try await issuers.remove(realm: "demo", issuer: HostTokenFixture.issuer)
                _ = try await issuers.add(.init(realm: "demo", issuer: HostTokenFixture.issuer, jwksURL: jwks.url, leeway: 60))
                let again = try await issuers.enroll(realm: "demo", issuer: HostTokenFixture.issuer, subjects: [HostTokenFixture.subject, "test"])
                guard case .enrolled(let relinked) = again[0] else { return XCTFail("\(again)") }
                XCTAssertEqual(relinked.id, before.id, "the same user, with its devices")
                guard case .failed = again[1] else { return XCTFail("a local password user is never taken over: \(again[1])") }

                let answer = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), key: try SigningKey.generate(.es256))
                XCTAssertEqual(answer.status, .ok, "\(answer.json)")
                XCTAssertEqual(try JWS.parse(XCTUnwrap(answer.json["access_token"]?.stringValue)).claims()["sub"]?.stringValue, before.id)
            }
        }
    }

    /// A PEM issuer whose certificate holds a P-256 key (most identity providers sign ES256): the key is read from
    /// the certificate's SubjectPublicKeyInfo, and its tokens verify. Before the fix the bare point of the BIT
    /// STRING was read as if it were the whole SubjectPublicKeyInfo, and every EC certificate was refused.
    func testAnECCertificateIssuerIsAcceptedAndItsTokensVerify() async throws {
        try await TestServer.forEachEngine { server, client in
            let now = server.clock.now()
            let key = P256.Signing.PrivateKey()
            let name = try DistinguishedName { CommonName("host-token EC issuer") }
            let certificate = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
                notValidBefore: now.addingTimeInterval(-86400), notValidAfter: now.addingTimeInterval(30 * 86400),
                issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256, extensions: Certificate.Extensions(),
                issuerPrivateKey: .init(key)
            )
            try await HostTokenFixture.register(server, jwksURL: nil)
            let issuers = server.runtime.hostTokens.issuers
            _ = try await issuers.add(
                .init(realm: "demo", issuer: HostTokenFixture.pemIssuer, pemCertificates: try certificate.serializeAsPEM().pemString, algorithms: ["ES256"])
            )
            _ = try await issuers.enroll(realm: "demo", issuer: HostTokenFixture.pemIssuer, subjects: ["ec-user"])
            let iat = Double(Int(now.timeIntervalSince1970))
            let claims: JSONObject = [
                "iss": .string(HostTokenFixture.pemIssuer), "sub": "ec-user", "aud": .string(HostTokenFixture.audience), "iat": .number(iat),
                "exp": .number(iat + 300), "jti": .string(UUID().uuidString),
            ]
            let token = try JWS.sign(
                header: ["typ": "JWT"], claims: claims, key: try SigningKey(algorithm: .es256, serialized: Array(key.derRepresentation))
            )
            let answer = try await client.exchange(server, token, key: try SigningKey.generate(.es256))
            XCTAssertEqual(answer.status, .ok, "\(answer.json)")
        }
    }

    /// Settings change in place: a renewed certificate takes over at once on this node, the users stay enrolled,
    /// and a bad change is refused as `add` refuses it, leaving the issuer as it was.
    func testUpdateReplacesSettingsAndKeepsEnrolments() async throws {
        try await TestServer.forEachEngine { server, client in
            let now = server.clock.now()
            let old = try HostTokenFixture.certificatePEM(0, notBefore: now.addingTimeInterval(-86400), days: 30)
            let renewed = try HostTokenFixture.certificatePEM(1, notBefore: now.addingTimeInterval(-86400), days: 30)
            try await HostTokenFixture.register(server, jwksURL: nil, pem: old)
            let issuers = server.runtime.hostTokens.issuers
            let subject: JSONValue = .string("pem-" + HostTokenFixture.subject)
            let signedByNew = try HostTokenFixture.token(now: now, key: 1, kid: nil, iss: HostTokenFixture.pemIssuer, changes: ["sub": subject])
            let before = try await client.exchange(server, signedByNew, key: try SigningKey.generate(.es256))
            XCTAssertEqual(before.json["reason"]?.stringValue, "bad_signature", "\(before.json)")

            let updated = try await issuers.update(realm: "demo", issuer: HostTokenFixture.pemIssuer) { $0.pemCertificates = renewed; $0.leeway = 60 }
            XCTAssertEqual(updated.leeway, 60)
            let after = try await client.exchange(
                server, try HostTokenFixture.token(now: now, key: 1, kid: nil, iss: HostTokenFixture.pemIssuer, changes: ["sub": subject]),
                key: try SigningKey.generate(.es256)
            )
            XCTAssertEqual(after.status, .ok, "the renewed certificate verifies and the user is still enrolled: \(after.json)")

            do {
                _ = try await issuers.update(realm: "demo", issuer: HostTokenFixture.pemIssuer) { $0.leeway = 9999 }
                XCTFail("a bad leeway was accepted")
            } catch let error as HostIssuerError {
                XCTAssertTrue(error.description.contains("leeway"), error.description)
            }
            let listed = try await issuers.list(realm: "demo")
            XCTAssertEqual(listed.first?.leeway, 60, "a refused update changes nothing")
            do {
                _ = try await issuers.update(realm: "demo", issuer: "https://unknown.example") { $0.leeway = 1 }
                XCTFail("updated an unregistered issuer")
            } catch HostIssuerError.notFound {}
        }
    }

    /// An enrolment that raced a removal can leave an identity behind; adding the issuer again starts it clean.
    func testANewIssuerInheritsNoLeftoverIdentity() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            _ = try await users.createExternalUser(realm: "demo", username: "left-over", kind: .hostIssuer, issuer: HostTokenFixture.issuer, subject: "left-over")
            _ = try await server.runtime.hostTokens.issuers.add(.init(realm: "demo", issuer: HostTokenFixture.issuer, jwksURL: "https://idp.example/jwks"))
            let found = try await users.user(realm: "demo", issuer: HostTokenFixture.issuer, subject: "left-over")
            XCTAssertNil(found)
        }
    }

    func testAnIssuerLimitedToClientsRefusesOthers() async throws {
        try await TestServer.forEachEngine { server, client in
            try await JWKSTestServer().run { jwks in
                jwks.serve([HostTokenFixture.publicJWK(0, kid: "k1")])
                let issuers = server.runtime.hostTokens.issuers
                _ = try await issuers.add(.init(realm: "demo", issuer: HostTokenFixture.issuer, jwksURL: jwks.url, clients: ["app-a"]))
                _ = try await issuers.enroll(realm: "demo", issuer: HostTokenFixture.issuer, subjects: [HostTokenFixture.subject])
                for id in ["app-a", "app-b"] { _ = try await server.runtime.oauth.clients.createPublicClient(realm: "demo", clientId: id) }
                let key = try SigningKey.generate(.es256)
                let refused = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), key: key, client: "app-b")
                XCTAssertEqual(refused.status, .badRequest)
                XCTAssertEqual(refused.json["error"]?.stringValue, "unauthorized_client")
                XCTAssertEqual(refused.json["reason"]?.stringValue, "client_not_allowed")
                let accepted = try await client.exchange(server, try HostTokenFixture.token(now: server.clock.now()), key: key, client: "app-a")
                XCTAssertEqual(accepted.status, .ok, "\(accepted.json)")

                do {
                    _ = try await issuers.add(.init(realm: "demo", issuer: "https://x.example", jwksURL: jwks.url, clients: []))
                    XCTFail("an empty client list was accepted")
                } catch let error as HostIssuerError {
                    XCTAssertTrue(error.description.contains("clients"), error.description)
                }
            }
        }
    }
}
