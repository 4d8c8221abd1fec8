// The errors routes throw on purpose, with an HTTP status and a stable code.
import Hummingbird
import KeywardJOSE
import KeywardWire

/// An error a route throws on purpose: rendered by `ErrorMiddleware` as `APIErrorBody` with a stable code.
struct APIError: Error {
    let status: HTTPResponse.Status
    let code: ErrorCode
    let message: String
    /// The finer rule that refused the request, where the code has several (`APIErrorBody.reason`).
    var reason: String?

    init(_ status: HTTPResponse.Status, _ code: ErrorCode, _ message: String, reason: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.reason = reason
    }

    static func realmNotFound(_ name: String) -> APIError {
        APIError(.notFound, .realmNotFound, "realm '\(displayable(name))' does not exist")
    }

    static let realmUnavailable = APIError(.serviceUnavailable, .unavailable, "the realm could not be read; try again shortly")

}

/// A part's own error type, seen from outside the part: only the HTTP status it stands for. Pages describe
/// such errors by status without knowing which part threw them.
protocol StatusBearingError: Error {
    var httpStatus: Int { get }
}
