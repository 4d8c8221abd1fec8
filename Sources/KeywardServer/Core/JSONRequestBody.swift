// Reading a JSON API's request body: its media type, its size, strict JSON, then the typed value.
import Foundation
import Hummingbird
import KeywardJOSE
import NIOCore

/// The body of a JSON API request, read once: `Content-Type: application/json` (a cross-site form cannot send it
/// without a CORS preflight), at most `maxSize` bytes, a JSON object with no member twice (two parsers could each
/// pick another), then decoded as the route's type. Each refusal is a 4xx naming what was wrong.
enum JSONRequestBody {
    static func object(_ request: Request, maxSize: Int) async throws -> JSONObject {
        try parse(try await bytes(request, maxSize: maxSize))
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ request: Request, maxSize: Int) async throws -> Value {
        let bytes = try await bytes(request, maxSize: maxSize)
        _ = try parse(bytes)
        do {
            return try JSONDecoder().decode(Value.self, from: Data(bytes))
        } catch let DecodingError.keyNotFound(key, context) {
            throw APIError(.badRequest, .invalidRequest, "the body has no \(path(context.codingPath + [key]))")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw APIError(.badRequest, .invalidRequest, "the body's \(path(context.codingPath)) is not of the expected type")
        } catch {
            throw APIError(.badRequest, .invalidRequest, "the body does not have the expected members")
        }
    }

    private static func parse(_ bytes: [UInt8]) throws -> JSONObject {
        do {
            return try requestJSONObject(bytes)
        } catch .malformed(let detail) {
            throw APIError(.badRequest, .invalidRequest, "the body is not a JSON object: \(detail)")
        } catch {
            throw APIError(.badRequest, .invalidRequest, "the body's strings must not contain NUL (\\u0000)")
        }
    }

    private static func bytes(_ request: Request, maxSize: Int) async throws -> [UInt8] {
        guard request.headers[.contentType]?.split(separator: ";").first?.trimmingBlanks.lowercased() == "application/json" else {
            throw APIError(.unsupportedMediaType, .unsupportedMediaType, "Content-Type must be application/json")
        }
        do {
            return Array(try await request.body.collect(upTo: maxSize).readableBytesView)
        } catch {
            throw APIError(.contentTooLarge, .payloadTooLarge, "the body is larger than \(maxSize) bytes")
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}
