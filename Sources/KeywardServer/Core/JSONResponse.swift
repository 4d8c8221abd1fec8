// JSON responses and the error bodies every JSON route answers with (Keyward's own and RFC 6749's).
import Foundation
import HTTPTypes
import Hummingbird
import KeywardJOSE
import KeywardWire

extension HTTPField.Name {
    static let dpopNonce = HTTPField.Name("DPoP-Nonce")!
}

/// Builds JSON responses. Routes use these instead of Hummingbird's default error bodies so every error
/// carries a stable `KeywardWire.ErrorCode`.
enum JSONResponse {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return make(bytes: data, status: status, headers: headers)
    }

    static func make(bytes: some Collection<UInt8>, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:], contentType: String = "application/json") -> Response {
        var fields = headers
        fields[.contentType] = contentType
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The token endpoint's answer (RFC 6749 §5.1), written by the JSON writer the tokens themselves use: on the
    /// busiest route Foundation's encoder cost several times as much.
    static func token(_ response: TokenResponse, headers: HTTPFields) -> Response {
        var object: JSONObject = [
            "access_token": .string(response.accessToken),
            "token_type": .string(response.tokenType),
            "expires_in": .number(Double(response.expiresIn)),
        ]
        if let scope = response.scope { object["scope"] = .string(scope) }
        if let refreshToken = response.refreshToken { object["refresh_token"] = .string(refreshToken) }
        if let idToken = response.idToken { object["id_token"] = .string(idToken) }
        return make(bytes: StrictJSON.serialize(object), headers: headers)
    }

    static func error(
        _ code: ErrorCode, _ message: String, status: HTTPResponse.Status, requestId: String?, reason: String? = nil, headers: HTTPFields = [:]
    ) -> Response {
        make(APIErrorBody(error: code, message: message, requestId: requestId, reason: reason), status: status, headers: headers)
    }
}
