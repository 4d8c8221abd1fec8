// The HTTP client a push sender talks through: the shared one, or its own for an extra CA or a proxy.
import AsyncHTTPClient
import Logging
import NIOSSL

/// The HTTP client a push sender talks through: the one it was given (never shut down by the sender; the default,
/// `HTTPClient.shared`, cannot be), or one of its own when its settings need one — an extra trust anchor or a
/// proxy. An own client must be shut down before the sender goes away (AsyncHTTPClient traps in debug builds on
/// a client that was never shut down); `shutdown()` is safe to call once or more, and does nothing otherwise.
struct PushHTTPClient: Sendable {
    let client: HTTPClient
    private let owned: Bool

    init(given: HTTPClient, extraTrustRoots: [NIOSSLCertificate]? = nil, proxy: HTTPClient.Configuration.Proxy?) {
        guard extraTrustRoots != nil || proxy != nil else {
            (client, owned) = (given, false)
            return
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        if let extraTrustRoots { tls.additionalTrustRoots = [.certificates(extraTrustRoots)] }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        configuration.proxy = proxy
        (client, owned) = (HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration), true)
    }

    func shutdown(logger: Logger, sender: String) async {
        guard owned else { return }
        do {
            try await client.shutdown()
        } catch let error as HTTPClientError where error == .alreadyShutdown {
            // A second call: nothing left to do.
        } catch {
            logger.warning("\(sender) HTTP client shutdown failed", metadata: ["error": .string(String(describing: error))])
        }
    }
}
