// Tests: how KeywardKit talks HTTP: request_uri fetches, errors naming the URL at fault, and link refusals.
import Foundation
import KeywardJOSE
@testable import KeywardKit
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How KeywardKit talks HTTP: request_uri is a plain GET for a JWT; failures name the URL at fault.
final class TransportTests: XCTestCase {
    let jwt = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"
    let requestURI = URL(string: "https://id.example.com/realms/demo/push-mfa/enroll/request-token/9f0c7a52-6a55-4d1e-a0a4-2c1a5d0e7b11")!

    func testRequestURIIsAPlainGetForTheJWT() async throws {
        let jwt = jwt
        let session = StubURLProtocol.session { request in
            XCTAssertEqual(request.httpMethod, "GET")
            XCTAssertEqual(request.value(forHTTPHeaderField: "Accept"), "application/jwt")
            XCTAssertNil(request.value(forHTTPHeaderField: "Authorization"), "the handle is the capability")
            XCTAssertNil(request.value(forHTTPHeaderField: "DPoP"))
            return (200, ["Content-Type": "application/jwt", "Cache-Control": "no-store"], Data((jwt + "\n").utf8))
        }
        let token = try await PushMFAClient.fetchToken(.requestURI(requestURI), session: session)
        XCTAssertEqual(token, jwt)
    }

    func testRequestURIThatIsNotAJWTIsRefused() async throws {
        let session = StubURLProtocol.session { _ in (200, ["Content-Type": "text/html"], Data("<html>login</html>".utf8)) }
        do {
            _ = try await PushMFAClient.fetchToken(.requestURI(requestURI), session: session)
            XCTFail("accepted HTML as a token")
        } catch let error as KeywardKitError {
            XCTAssertEqual(error, .unexpectedResponse("request_uri \(requestURI) did not return a JWT"))
        }
    }

    func testExpiredRequestURISurfacesTheServerMessage() async throws {
        let session = StubURLProtocol.session { _ in (404, ["Content-Type": "application/json"], Data(#"{"error":"Enrollment request not found"}"#.utf8)) }
        do {
            _ = try await PushMFAClient.fetchToken(.requestURI(requestURI), session: session)
            XCTFail("accepted a 404")
        } catch let error as KeywardKitError {
            XCTAssertEqual(error, .server(status: 404, code: nil, description: "Enrollment request not found"))
        }
    }

    func testUnreachableRealmIsNamed() async throws {
        // Port 1 on loopback: nothing listens, the connection is refused at once.
        let verifier = RealmTokenVerifier(issuer: "http://127.0.0.1:1/realms/demo")
        do {
            _ = try await verifier.verifyEnrollmentToken(jwt)
            XCTFail("verified without keys")
        } catch let error as KeywardKitError {
            guard case .unreachable(let url, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(url, "http://127.0.0.1:1/realms/demo/protocol/openid-connect/certs")
            XCTAssertTrue(error.description.hasPrefix("cannot reach http://127.0.0.1:1/realms/demo/protocol/openid-connect/certs: "), error.description)
        }
    }
}

/// Link refusals say what is wrong with the link.
final class EnrollmentLinkRefusalTests: XCTestCase {
    func testRefusalsNameTheProblem() {
        let cases: [(String, String)] = [
            ("my-secure://enroll?token=abc", "invalid link: token= holds 'abc', not a JWT"),
            ("my-secure://enroll?request_uri=file%3A%2F%2F%2Fetc%2Fpasswd", "invalid link: request_uri 'file:///etc/passwd' is not an http(s) URL"),
            ("my-secure://enroll?x=1", "invalid link: the link has neither token= nor request_uri="),
            ("hello", "invalid link: 'hello' is neither a JWT nor a link"),
        ]
        for (input, message) in cases {
            XCTAssertThrowsError(try EnrollmentLink.parse(input), input) { error in
                XCTAssertEqual((error as? KeywardKitError)?.description, message)
            }
        }
    }
}
