import AsyncHTTPClient
import Foundation
import NIOCore

/// Fetches an issuer's published JSON documents: its JWK Set, its OpenID Connect discovery document. A protocol so
/// the caches are tested against a fetcher that fails or counts; the real one is `HTTPDocumentFetcher`.
protocol DocumentFetcher: Sendable {
    func fetch(_ url: String) async throws(DocumentFetchError) -> FetchedDocument
}

struct FetchedDocument: Sendable {
    var body: [UInt8]
    /// `Cache-Control: max-age`, in seconds, when the issuer sent one; 0 for `no-cache` or `no-store`.
    var maxAge: Int?
}

struct DocumentFetchError: Error, CustomStringConvertible {
    let description: String
}

/// GETs issuer documents over HTTP with AsyncHTTPClient: a client of its own that follows no redirect (an https URL must
/// not be walked down to http, nor to another host the operator never registered), a bounded body and time.
final class HTTPDocumentFetcher: DocumentFetcher {
    static let maxBodyBytes = 256 * 1024
    private let client: HTTPClient
    private let timeout: TimeAmount

    init(timeout: TimeAmount = .seconds(5)) {
        client = HTTPClient.outbound(timeout: timeout)
        self.timeout = timeout
    }

    /// One deadline for the whole fetch, body included: AsyncHTTPClient's own timeout ends with the response head,
    /// and an endpoint trickling its body a byte at a time must not hold the requests waiting for it.
    func fetch(_ url: String) async throws(DocumentFetchError) -> FetchedDocument {
        do {
            return try await withThrowingTaskGroup(of: FetchedDocument?.self) { [client, timeout] group in
                group.addTask {
                    var request = HTTPClientRequest(url: url)
                    request.headers.add(name: "Accept", value: "application/jwk-set+json, application/json")
                    let response = try await client.execute(request, timeout: timeout)
                    guard response.status == .ok else {
                        throw DocumentFetchError(description: "\(url) answered HTTP \(response.status.code)")
                    }
                    let body = try await response.body.collect(upTo: Self.maxBodyBytes)
                    return FetchedDocument(
                        body: Array(body.readableBytesView), maxAge: Self.maxAge(response.headers[canonicalForm: "cache-control"].map(String.init))
                    )
                }
                group.addTask {
                    try await Task.sleep(for: .nanoseconds(timeout.nanoseconds))
                    return nil
                }
                defer { group.cancelAll() }
                guard let document = try await group.next() ?? nil else {
                    throw DocumentFetchError(description: "\(url) did not answer within \(timeout.nanoseconds / 1_000_000_000) s")
                }
                return document
            }
        } catch let error as DocumentFetchError {
            throw error
        } catch is NIOTooManyBytesError {
            throw DocumentFetchError(description: "\(url) sent more than \(Self.maxBodyBytes) bytes")
        } catch {
            throw DocumentFetchError(description: "\(url) could not be fetched: \(error)")
        }
    }

    /// RFC 9111 §5.2.2: `no-store` and `no-cache` mean "ask again" (0); otherwise `max-age`, when present and sane.
    static func maxAge(_ directives: [String]) -> Int? {
        var maxAge: Int?
        for directive in directives.flatMap({ $0.split(separator: ",") }) {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            switch parts[0] {
            case "no-store", "no-cache": return 0
            case "max-age" where parts.count == 2: maxAge = Int(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
            default: continue
            }
        }
        return maxAge.map { max(0, $0) }
    }

    func shutdown() async {
        try? await client.shutdown()
    }
}

extension HTTPClient {
    /// A client for calls Keyward makes to other parties (issuers, identity providers): it follows no redirect, so a
    /// request goes only where the operator's settings said, and it gives up after `timeout`.
    static func outbound(timeout: TimeAmount) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: timeout, read: timeout)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }
}
