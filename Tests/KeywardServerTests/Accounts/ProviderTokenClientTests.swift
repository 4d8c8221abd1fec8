// Tests: the code exchange with a provider is cut off at its deadline even when the body trickles in.
import Foundation
import Hummingbird
import HummingbirdTesting
@testable import KeywardServer
import NIOCore
import XCTest

/// The code exchange with a provider is bounded as a whole (security review L4): a token endpoint that sends its
/// answer's head at once and then its body a byte at a time must not hold the callback waiting on it.
final class ProviderTokenClientTests: XCTestCase {
    func testATokenEndpointTricklingItsBodyIsCutOffAtTheDeadline() async throws {
        let router = Router()
        router.post("/token") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody { writer in
                for _ in 0..<50 {
                    try await writer.write(ByteBuffer(string: " "))
                    try await Task.sleep(for: .milliseconds(100))
                }
                try await writer.write(ByteBuffer(string: #"{"id_token": "late"}"#))
                try await writer.finish(nil)
            })
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let tokens = ProviderTokenClient(timeout: .milliseconds(500))
            do {
                _ = try await tokens.idToken(.init(
                    endpoint: "http://127.0.0.1:\(client.port ?? 0)/token", code: "c", redirectURI: "https://keyward.example/cb", codeVerifier: "v",
                    clientId: "keyward", clientSecret: "s", secretInBody: false
                ))
                XCTFail("the trickled answer was waited for")
            } catch let error as SignInFailure {
                XCTAssertEqual(error.code, .providerUnavailable, error.description)
                XCTAssertTrue(error.message.contains("did not answer in time"), error.message)
            }
            await tokens.shutdown()
        }
    }
}
