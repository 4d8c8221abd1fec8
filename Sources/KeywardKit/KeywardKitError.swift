import KeywardWire

public enum KeywardKitError: Error, CustomStringConvertible, Equatable {
    case invalidKeyName(String)
    case corruptKeyFile(String)
    case cannotWrite(String)
    case invalidURL(String)
    /// The server refused the request; `code` is its stable error code when it sent one.
    case server(status: Int, code: String?, description: String?)
    case unexpectedResponse(String)

    public var description: String {
        switch self {
        case .invalidKeyName(let name): "key name '\(name)' is invalid (1-64 letters, digits, '-', '_')"
        case .corruptKeyFile(let path): "key file \(path) is corrupt"
        case .cannotWrite(let path): "cannot write \(path)"
        case .invalidURL(let url): "'\(url)' is not a valid URL"
        case .server(let status, let code, let description):
            "server answered \(status)\(code.map { " \($0)" } ?? "")\(description.map { ": \($0)" } ?? "")"
        case .unexpectedResponse(let detail): "unexpected response: \(detail)"
        }
    }
}
