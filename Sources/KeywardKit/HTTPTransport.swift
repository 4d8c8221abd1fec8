// KeywardKit's HTTP calls: URLSession with Keyward's error mapping (unreachable server, non-HTTP answers).
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSession {
    /// `data(for:)` for KeywardKit: a transport failure (refused, unknown host, TLS, timeout) becomes
    /// `KeywardKitError.unreachable` naming the URL; Foundation's own text on Linux names neither.
    func keywardData(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let url = request.url?.absoluteString ?? "(no URL)"
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await self.data(for: request)
        } catch let error as URLError {
            throw KeywardKitError.unreachable(url: url, reason: Self.reason(error))
        }
        guard let http = response as? HTTPURLResponse else { throw KeywardKitError.unexpectedResponse("\(url) did not answer over HTTP") }
        return (data, http)
    }

    /// A plain GET (request_uri, JWKS).
    func keywardGet(_ url: URL, accept: String) async throws -> (Data, HTTPURLResponse) {
        var request = URLRequest(url: url)
        request.setValue(accept, forHTTPHeaderField: "Accept")
        return try await keywardData(for: request)
    }

    static func reason(_ error: URLError) -> String {
        switch error.code {
        case .cannotConnectToHost: "connection refused"
        case .cannotFindHost, .dnsLookupFailed: "host not found"
        case .timedOut: "timed out"
        case .notConnectedToInternet, .networkConnectionLost: "no network connection"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
            .serverCertificateHasUnknownRoot, .clientCertificateRejected:
            "TLS handshake failed"
        case .cancelled: "cancelled"
        case .unsupportedURL: "unsupported URL"
        default: "transport error \(error.code.rawValue)"
        }
    }
}
