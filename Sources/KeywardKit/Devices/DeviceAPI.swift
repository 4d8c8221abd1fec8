// Calling a realm's device endpoints over URLSession and reading the server's refusals.
import Foundation
import KeywardJOSE
import KeywardWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The device endpoints of one realm (`{issuer}/v1/device/…`) over URLSession. Answers outside 2xx become
/// ``KeywardKitError/server(status:code:description:)`` with the server's stable code; signed calls hand back
/// every answer, for the registrar to read `CLOCK_SKEW` from.
struct DeviceAPI: Sendable {
    let issuer: String
    let session: URLSession

    init(issuer: String, session: URLSession) {
        self.issuer = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        self.session = session
    }

    /// `path` under the realm (`/v1/device/status`), or an absolute http(s) URL as it is.
    func url(_ path: String) throws -> URL {
        let text = path.hasPrefix("http://") || path.hasPrefix("https://") ? path : issuer + (path.hasPrefix("/") ? path : "/" + path)
        guard let url = URL(string: text), url.host != nil else { throw KeywardKitError.invalidURL(text) }
        return url
    }

    func challenge(appId: String) async throws -> DeviceChallengeResponse {
        let data = try await post("/v1/device/challenge", body: try JSONEncoder().encode(DeviceChallengeRequest(appId: appId)))
        return try decode(DeviceChallengeResponse.self, data, from: "/v1/device/challenge")
    }

    /// The registration's answer, and whether the server registered the key just now (201) rather than before (200).
    func register(_ body: JSONObject) async throws -> (created: Bool, answer: DeviceRegistrationResponse) {
        let (data, response) = try await exchange("POST", try url("/v1/device/register"), body: Data(StrictJSON.serialize(body)))
        guard response.statusCode == 200 || response.statusCode == 201 else { throw Self.refusal(status: response.statusCode, data: data).error }
        return (response.statusCode == 201, try decode(DeviceRegistrationResponse.self, data, from: "/v1/device/register"))
    }

    /// Sends a request as it is (signed by the caller) and returns whatever the server answered.
    func exchange(_ method: String, _ url: URL, body: Data?, contentType: String? = "application/json", headers: SignedRequestHeaders? = nil) async throws -> (Data, HTTPURLResponse) {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if body != nil, let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        request.httpBody = body
        headers?.apply(to: &request)
        return try await session.keywardData(for: request)
    }

    private func post(_ path: String, body: Data) async throws -> Data {
        let (data, response) = try await exchange("POST", try url(path), body: body)
        guard (200..<300).contains(response.statusCode) else { throw Self.refusal(status: response.statusCode, data: data).error }
        return data
    }

    private func decode<Value: Decodable>(_ type: Value.Type, _ data: Data, from path: String) throws -> Value {
        guard let value = try? JSONDecoder().decode(type, from: data) else {
            throw KeywardKitError.unexpectedResponse("\(issuer)\(path) answered \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
        return value
    }

    /// A refusal as the device API writes it: `{"error", "message", "reason"?, "server_timestamp"?}`. Read
    /// leniently: a proxy's HTML page still becomes an error naming the status.
    struct Refusal: Sendable, Equatable {
        let status: Int
        let code: String?
        let message: String?
        let reason: String?
        let serverTimestamp: Int64?

        var error: KeywardKitError {
            let detail = [message, reason.map { "reason \($0)" }].compactMap { $0 }.joined(separator: "; ")
            return .server(status: status, code: code, description: detail.isEmpty ? nil : detail)
        }
    }

    static func refusal(status: Int, data: Data) -> Refusal {
        let object = try? StrictJSON.parseObject(Array(data))
        return Refusal(
            status: status, code: object?.string("error"), message: object?.string("message") ?? (object == nil && !data.isEmpty ? String(decoding: data.prefix(200), as: UTF8.self) : nil),
            reason: object?.string("reason"), serverTimestamp: object?.int("server_timestamp")
        )
    }
}
