// The HTTP exchange outbound clients make (push senders, Google's token source), with a deadline, a bounded body and log excerpts.
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// What the senders need from an HTTP exchange: status, headers and the start of the body.
struct OutboundHTTPResponse: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]

    var isSuccess: Bool { (200..<300).contains(status) }

    /// The body for a log line: at most `limit` bytes, cut on a UTF-8 character boundary, on one line.
    func bodyExcerpt(limit: Int = 512) -> String {
        OutboundHTTP.excerpt(body, limit: limit)
    }
}

enum OutboundHTTP {
    /// A push belongs to a login the user is waiting on; a slower answer is as good as none.
    static let timeout: TimeAmount = .seconds(15)
    /// Push-service answers are small JSON; more is kept for nobody.
    static let maximumBodyBytes = 64 * 1024

    static func post(
        _ client: HTTPClient, url: String, headers: HTTPHeaders, body: [UInt8]
    ) async throws -> OutboundHTTPResponse {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers = headers
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client.execute(request, timeout: timeout)
        var kept: [UInt8] = []
        for try await chunk in response.body {
            let room = maximumBodyBytes - kept.count
            if room > 0 {
                kept += chunk.readableBytesView.prefix(room)
            }
        }
        return OutboundHTTPResponse(status: Int(response.status.code), headers: response.headers, body: kept)
    }

    static func excerpt(_ bytes: [UInt8], limit: Int) -> String {
        var end = min(bytes.count, limit)
        // Never split a multi-byte character: back off while the first dropped byte is a continuation byte.
        while end > 0, end < bytes.count, bytes[end] & 0xC0 == 0x80 {
            end -= 1
        }
        return String(decoding: bytes[..<end], as: UTF8.self)
            .replacingOccurrences(of: "\r", with: " ")
            .replacingOccurrences(of: "\n", with: " ")
    }

    /// A JSON body with stable member order, so logs and test failures are readable.
    static func json(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Our bodies are strings and nested objects of strings: encoding cannot fail.
        return Array(try! encoder.encode(value))
    }
}
