// Fetching issuers' published JSON documents over HTTP, without redirects and under a deadline.
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

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

    func fetch(_ url: String) async throws(DocumentFetchError) -> FetchedDocument {
        do {
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Accept", value: "application/jwk-set+json, application/json")
            let answer = try await client.executeCollecting(request, deadline: timeout, maxBodyBytes: Self.maxBodyBytes)
            guard answer.status == .ok else {
                throw DocumentFetchError(description: "\(url) answered HTTP \(answer.status.code)")
            }
            return FetchedDocument(body: answer.body, maxAge: Self.maxAge(answer.headers[canonicalForm: "cache-control"].map(String.init)))
        } catch let error as DocumentFetchError {
            throw error
        } catch is HTTPClient.DeadlinePassed {
            throw DocumentFetchError(description: "\(url) did not answer within \(timeout.nanoseconds / 1_000_000_000) s")
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
    /// The request's answer was not complete within its deadline.
    struct DeadlinePassed: Error {}

    /// Sends `request` and reads the whole body under one deadline: AsyncHTTPClient's own timeout ends with the
    /// response head, and an endpoint trickling its body a byte at a time must not hold the requests waiting for it.
    /// Throws `DeadlinePassed`, or `NIOTooManyBytesError` past `maxBodyBytes`.
    func executeCollecting(
        _ request: HTTPClientRequest, deadline: TimeAmount, maxBodyBytes: Int
    ) async throws -> (status: HTTPResponseStatus, headers: HTTPHeaders, body: [UInt8]) {
        try await withThrowingTaskGroup(of: (status: HTTPResponseStatus, headers: HTTPHeaders, body: [UInt8])?.self) { group in
            group.addTask {
                let response = try await self.execute(request, timeout: deadline)
                let body = try await response.body.collect(upTo: maxBodyBytes)
                return (response.status, response.headers, Array(body.readableBytesView))
            }
            group.addTask {
                try await _Concurrency.Task.sleep(for: .nanoseconds(deadline.nanoseconds))
                return nil
            }
            defer { group.cancelAll() }
            guard let answer = try await group.next() ?? nil else { throw DeadlinePassed() }
            return answer
        }
    }

    static func outbound(timeout: TimeAmount) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: timeout, read: timeout)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }
}
