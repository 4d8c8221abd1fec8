// Test support: an issuer's JWKS endpoint on a local socket, with keys, Cache-Control and outages set by the test.
import Foundation
import Hummingbird
import HummingbirdTesting
import KeywardJOSE
import NIOCore
import Synchronization

/// An issuer's JWKS endpoint on a real socket (127.0.0.1, a free port): what it serves, its Cache-Control, and
/// whether it is down are set by the test; it counts the fetches it answers.
final class JWKSTestServer: Sendable {
    private struct State {
        var keys: [JWK] = []
        var cacheControl: String? = "max-age=300"
        var down = false
        var fetches = 0
        var url = ""
    }

    private let state = Mutex(State())

    /// The JWKS URL, once `run` listens.
    var url: String { state.withLock { $0.url } }

    var fetches: Int { state.withLock { $0.fetches } }

    func serve(_ keys: [JWK], cacheControl: String? = "max-age=300") {
        state.withLock {
            $0.keys = keys
            $0.cacheControl = cacheControl
        }
    }

    /// Down: every fetch answers 503.
    func setDown(_ down: Bool) { state.withLock { $0.down = down } }

    /// Runs `body` while the endpoint listens; `url` is its JWKS URL.
    func run(_ body: @Sendable (JWKSTestServer) async throws -> Void) async throws {
        let router = Router()
        router.get("/jwks") { [self] _, _ -> Response in
            let (keys, cacheControl, down) = self.state.withLock { current in
                current.fetches += 1
                return (current.keys, current.cacheControl, current.down)
            }
            if down { return Response(status: .serviceUnavailable) }
            var headers: HTTPFields = [.contentType: "application/jwk-set+json"]
            if let cacheControl { headers[.cacheControl] = cacheControl }
            let body = StrictJSON.serialize(JWKSet(keys: keys).jsonObject)
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = client.port ?? 0
            self.state.withLock { $0.url = "http://127.0.0.1:\(port)/jwks" }
            try await body(self)
        }
    }
}
