import AsyncHTTPClient
import Foundation
import NIOCore

enum HTTPProbe {
    static func status(of url: String) async throws -> Int {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(2))
        _ = try await response.body.collect(upTo: 1 << 20)
        return Int(response.status.code)
    }
}
