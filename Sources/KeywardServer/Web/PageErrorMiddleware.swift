// Turning errors on the page routes into an HTML page with the request id, never JSON or internals.
import Hummingbird
import Logging
import NIOCore

/// Errors on the page routes become an HTML page with the request id, never JSON or internals: a person reads
/// these, and support needs the id to find the log line. The device API keeps its JSON errors (`ErrorMiddleware`).
struct PageErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let renderer: PageRenderer

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let (status, heading, text) = Self.describe(error)
            if status.code >= 500 {
                context.logger.error("page failed", metadata: ["error": "\(String(reflecting: error))", "status": "\(status.code)"])
            }
            return renderer.errorPage(heading: heading, text: text, status: status, realm: context.parameters.get("realm"), requestId: context.id)
        }
    }

    /// What the person is told. Storage and other unexpected failures say only that something went wrong.
    static func describe(_ error: any Error) -> (HTTPResponse.Status, String, String) {
        switch error {
        case let error as APIError where error.status == .notFound:
            return (.notFound, "Not found", "There is no such page here. Check the address.")
        case let error as APIError where error.status == .serviceUnavailable:
            return (.serviceUnavailable, "Temporarily unavailable", "Keyward cannot complete this step right now. Please try again in a moment.")
        case let error as APIError where error.status.code < 500:
            return (error.status, "Request refused", error.message)
        case is NIOTooManyBytesError:
            return (.contentTooLarge, "Request too large", "The form sent more data than this page accepts.")
        case let error as HTTPError where error.status.code < 500:
            return (error.status, "Request refused", error.status.reasonPhrase)
        case let error as any StatusBearingError where error.httpStatus == 404:
            return (.notFound, "Not found", "There is no such page here. Check the address.")
        case let error as any StatusBearingError where error.httpStatus == 503:
            return (.serviceUnavailable, "Temporarily unavailable", "Keyward cannot complete this step right now. Please try again in a moment.")
        case let error as StoreError:
            if case .notFound = error { return (.notFound, "Not found", "There is no such page here. Check the address.") }
            return (.serviceUnavailable, "Temporarily unavailable", "Keyward cannot complete this step right now. Please try again in a moment.")
        default:
            return (.internalServerError, "Something went wrong", "Keyward could not complete this step. Please try again; if it keeps happening, quote the request id below.")
        }
    }
}
