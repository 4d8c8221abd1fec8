// Tests: BrokerClient's relay URL and its reading of the answer, without a server.
import Foundation
import KeywardJOSE
@testable import KeywardKit
import XCTest

final class BrokerClientUnitTests: XCTestCase {
    private let returnURL = "com.example.app:/broker"

    private func client() throws -> BrokerClient {
        BrokerClient(
            configuration: .init(issuer: "https://id.example.com/realms/demo/", clientId: "app", returnURL: returnURL),
            sessionKey: DPoPSigner(key: try SigningKey.generate(.edDSA))
        )
    }

    func testTheRelayURLCarriesTheAppTheReturnAddressAFreshNonceAndThePublicKeyOnly() throws {
        let client = try client()
        let request = try client.startRelay()
        let components = try XCTUnwrap(URLComponents(url: request.url, resolvingAgainstBaseURL: false))
        XCTAssertEqual(components.scheme, "https")
        XCTAssertEqual(components.path, "/realms/demo/auth/relay")
        let query = Dictionary(uniqueKeysWithValues: (components.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        XCTAssertEqual(query["client_id"], "app")
        XCTAssertEqual(query["return"], returnURL)
        XCTAssertEqual(query["nonce"], request.nonce)
        XCTAssertEqual(request.nonce.count, 32, "24 random bytes")
        XCTAssertNotEqual(try client.startRelay().nonce, request.nonce)
        let key = try StrictJSON.parseObject(try Base64URL.decode(try XCTUnwrap(query["publicKey"])))
        XCTAssertEqual(key, client.sessionKey.key.publicJWK.requiredMembers)
        XCTAssertNil(key["d"], "nothing private")
    }

    func testTheAnswerMustComeToTheReturnAddressWithThisRelaysNonce() throws {
        let client = try client()
        let request = try client.startRelay()
        let good = URL(string: "\(returnURL)#code=abc&nonce=\(request.nonce)")!
        XCTAssertEqual(try client.code(from: good, for: request), "abc")

        for (why, text) in [
            ("another address", "com.evil.app:/broker#code=abc&nonce=\(request.nonce)"),
            ("another nonce", "\(returnURL)#code=abc&nonce=other"),
            ("no nonce", "\(returnURL)#code=abc"),
            ("no code", "\(returnURL)#nonce=\(request.nonce)"),
            ("in the query", "\(returnURL)?code=abc&nonce=\(request.nonce)"),
        ] {
            XCTAssertThrowsError(try client.code(from: URL(string: text)!, for: request), why) { error in
                guard case KeywardKitError.signInMismatch = error else { return XCTFail("\(why): \(error)") }
            }
        }
    }

    func testARefusalComesBackAsTheRealmSentIt() throws {
        let client = try client()
        let request = try client.startRelay()
        let refused = URL(string: "\(returnURL)#error=access_denied&error_description=the%20person%20did%20not%20allow%20the%20app&nonce=\(request.nonce)")!
        XCTAssertThrowsError(try client.code(from: refused, for: request)) { error in
            guard case KeywardKitError.signInRefused(let code, let description) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(code, "access_denied")
            XCTAssertEqual(description, "the person did not allow the app")
        }
    }
}
