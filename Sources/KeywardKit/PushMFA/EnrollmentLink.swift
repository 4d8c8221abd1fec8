// Reading a scanned QR code or pasted link into an enrollment token or the URL to fetch it from.
import Foundation

/// What a scanned QR code or a pasted link holds: the enrollment (or confirm) token itself, or a `request_uri`
/// to fetch it from. Accepts the forms the original's clients accept: a raw JWT, an app link with `token=` or
/// `request_uri=` (any scheme, e.g. `my-secure://enroll?…`), or a plain http(s) URL.
public enum EnrollmentLink: Equatable, Sendable {
    /// The token itself, a compact JWS.
    case token(String)
    /// An http(s) URL to fetch the token from with a plain GET.
    case requestURI(URL)

    /// Reads a scanned or pasted value (surrounding white space ignored); throws
    /// ``KeywardKitError/invalidLink(_:)`` for anything that is not one of the forms above.
    public static func parse(_ input: String) throws -> EnrollmentLink {
        let text = input.trimmingCharacters(in: .whitespacesAndNewlines)
        if isCompactJWS(text) { return .token(text) }
        guard let components = URLComponents(string: text), components.scheme != nil else {
            throw KeywardKitError.invalidLink("'\(text.prefix(80))' is neither a JWT nor a link")
        }
        let items = components.queryItems ?? []
        // URLComponents decodes %XX but keeps "+" (base64 and JWTs never contain a literal space).
        if let token = items.first(where: { $0.name == "token" })?.value {
            guard isCompactJWS(token) else { throw KeywardKitError.invalidLink("token= holds '\(token.prefix(40))', not a JWT") }
            return .token(token)
        }
        if let value = items.first(where: { $0.name == "request_uri" })?.value {
            guard let url = URL(string: value), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
                throw KeywardKitError.invalidLink("request_uri '\(value.prefix(80))' is not an http(s) URL")
            }
            return .requestURI(url)
        }
        if ["http", "https"].contains(components.scheme?.lowercased() ?? ""), let url = components.url { return .requestURI(url) }
        throw KeywardKitError.invalidLink("the link has neither token= nor request_uri=")
    }

    static func isCompactJWS(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 3 && parts.allSatisfy { part in
            !part.isEmpty && part.utf8.allSatisfy { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) }
        }
    }
}
