// Tests: the broker relay's query read on its own — what it accepts, and the words of each refusal.
import KeywardHTTPInput
import KeywardJOSE
import XCTest

final class RelayRequestTests: XCTestCase {
    private let ed25519 = #"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"k1","alg":"EdDSA","use":"sig"}"#

    private func parameters(_ key: String, nonce: String = "nonce-0123456789ab") -> [String: String] {
        ["client_id": "app", "nonce": nonce, "publicKey": Base64URL.encode(Array(key.utf8)), "return": "https://app.example.com/broker"]
    }

    func testAnEd25519KeyIsAcceptedAndNamedByItsRequiredMembersOnly() throws {
        let request = try RelayRequest(parameters(ed25519))
        XCTAssertEqual(request.clientId, "app")
        XCTAssertEqual(request.returnURL, "https://app.example.com/broker")
        XCTAssertNil(request.sessionKey.kid)
        XCTAssertNil(request.sessionKey.alg)
        XCTAssertNil(request.sessionKey.use)
        XCTAssertEqual(request.sessionKey.jsonObject, ["kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"])
    }

    func testEachRefusalNamesTheParameterAtFault() throws {
        let p384 = try SigningKey.generate(.es384).publicJWK.requiredMembers
        let cases: [([String: String], String)] = [
            (parameters(ed25519).filter { $0.key != "client_id" }, "client_id is missing"),
            (parameters(ed25519).filter { $0.key != "return" }, "return is missing"),
            (parameters(ed25519, nonce: "short"), "nonce must be 16-128"),
            (parameters(ed25519, nonce: "nonce with spaces 123"), "nonce must be 16-128"),
            (parameters(ed25519).filter { $0.key != "publicKey" }, "publicKey is missing"),
            (parameters("not json"), "not base64url-encoded JSON"),
            (parameters(#"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","d":"AAAA"}"#), "private member"),
            (parameters(String(decoding: StrictJSON.serialize(p384), as: UTF8.self)), "must be a P-256 or Ed25519 key"),
            (["client_id": "app", "nonce": "nonce-0123456789ab", "publicKey": String(repeating: "A", count: 513), "return": "x"], "longer than 512"),
        ]
        for (parameters, words) in cases {
            XCTAssertThrowsError(try RelayRequest(parameters), words) { error in
                guard let refusal = error as? RelayRequest.Refusal else { return XCTFail("\(error)") }
                XCTAssertTrue(refusal.text.contains(words), "\(refusal.text) does not say \(words)")
            }
        }
    }
}
