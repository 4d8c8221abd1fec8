// The form body a client posts to the token, pushed-request and revocation endpoints.
import Hummingbird
import KeywardHTTPInput

/// An endpoint's `application/x-www-form-urlencoded` body (RFC 6749 §3.2): anything else, a repeated parameter
/// (§3.1) or a malformed body is `invalid_request`.
enum OAuthForm {
    static func read(_ request: Request, maxBodySize: Int) async throws -> [String: String] {
        let mediaType = request.headers[.contentType]?.split(separator: ";").first?.trimmingBlanks.lowercased()
        guard mediaType == "application/x-www-form-urlencoded" else {
            throw OAuthFailure.invalidRequest("Content-Type must be application/x-www-form-urlencoded")
        }
        let body = try await request.body.collect(upTo: maxBodySize)
        do throws(FormBody.Failure) {
            return try FormBody.parse(body.readableBytesView)
        } catch .duplicate(let name) {
            throw OAuthFailure.invalidRequest("parameter '\(name.prefix(64))' appears more than once")
        } catch {
            throw OAuthFailure.invalidRequest("malformed form body")
        }
    }
}
