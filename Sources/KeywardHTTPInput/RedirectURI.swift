// A client's registered redirect URI and the one rule a request's is compared by (RFC 8252 §7, RFC 9700 §4.1.3).
import KeywardJOSE

/// A redirect URI a client registered: a claimed `https` URL, a private-use scheme in reverse-DNS form
/// (`com.example.app:/cb`) or a loopback `http` URL on `127.0.0.1` or `[::1]` (RFC 8252 §7.1–7.3). A request's
/// `redirect_uri` matches it byte for byte (RFC 9700 §4.1.3: no normalisation, so a trailing slash, a query, a
/// letter's case or a percent-encoding makes another URI), except the port of a loopback URI, which a native app
/// picks when it starts listening (RFC 8252 §7.3).
public struct RedirectURI: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case https
        case privateUseScheme = "private-use scheme"
        case loopback
    }

    public let value: String
    public let kind: Kind
    public var description: String { value }

    public static let maxLength = 2048

    /// Checks a URI an operator registers, refusing what RFC 6749 §3.1.2 and RFC 8252 §7–8 rule out, each refusal
    /// naming the rule.
    public init(registering text: String) throws(RedirectURIError) {
        func refuse(_ problem: String) -> RedirectURIError { RedirectURIError(uri: text, problem: problem) }
        guard !text.isEmpty else { throw refuse("it is empty") }
        guard text.utf8.count <= Self.maxLength else { throw refuse("it is longer than \(Self.maxLength) bytes") }
        guard text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw refuse("only printable ASCII is allowed (percent-encode anything else), no spaces")
        }
        guard !text.contains("#") else { throw refuse("a redirect URI must not have a fragment (RFC 6749 §3.1.2)") }
        // Browsers read a backslash as a slash (the WHATWG URL standard), so it would hide another host or path.
        guard !text.contains("\\") else { throw refuse("a backslash is not allowed") }
        guard let colon = text.firstIndex(of: ":") else { throw refuse("it has no scheme") }
        let scheme = text[..<colon]
        let rest = text[text.index(after: colon)...]
        guard Self.isScheme(scheme) else { throw refuse("'\(scheme)' is not a URI scheme (RFC 3986 §3.1)") }
        guard scheme == scheme.lowercased() else { throw refuse("write the scheme in lower case ('\(scheme.lowercased())'): URIs are compared exactly") }
        switch scheme {
        case "https":
            guard let authority = Self.authority(of: rest), !authority.host.isEmpty else { throw refuse("an https URI needs a host") }
            guard !authority.hasUserInfo else { throw refuse("a user name or password in the URI is not allowed") }
            guard Self.isHost(authority.host) else {
                throw refuse("'\(authority.host)' is not a host name or IP address (letters, digits, '-' and '.', or [IPv6])")
            }
            guard authority.port.map(Self.isPort) ?? true else { throw refuse("the port is not a number in 1-65535") }
            guard authority.remainder.hasPrefix("/") else { throw refuse("an https URI needs a path, at least '/'") }
            kind = .https
        case "http":
            guard let authority = Self.authority(of: rest) else { throw refuse("an http URI needs a host") }
            guard !authority.hasUserInfo else { throw refuse("a user name or password in the URI is not allowed") }
            guard Self.loopbackHosts.contains(authority.host) else {
                if authority.host.lowercased() == "localhost" {
                    throw refuse("use the loopback address 127.0.0.1 or [::1] instead of localhost (RFC 8252 §8.3)")
                }
                throw refuse("http is allowed only on the loopback address 127.0.0.1 or [::1] (RFC 8252 §7.3); use https")
            }
            guard authority.port.map(Self.isPort) ?? true else { throw refuse("the port is not a number in 1-65535") }
            guard authority.remainder.hasPrefix("/") else { throw refuse("a loopback URI needs a path, at least '/'") }
            kind = .loopback
        default:
            guard scheme.contains(".") else {
                throw refuse("a private-use scheme is the app's reverse domain name, such as com.example.app (RFC 8252 §7.1, §8.4)")
            }
            guard rest.hasPrefix("/") else { throw refuse("write a private-use URI as \(scheme):/path (RFC 8252 §7.1)") }
            if let authority = Self.authority(of: rest), authority.hasUserInfo {
                throw refuse("a user name or password in the URI is not allowed")
            }
            kind = .privateUseScheme
        }
        value = text
    }

    /// Whether a request's `redirect_uri` names this registration: the same bytes, or for a loopback URI the same
    /// bytes but for a port of the request's choosing.
    public func matches(_ requested: String) -> Bool {
        guard kind == .loopback else { return requested.utf8.elementsEqual(value.utf8) }
        guard requested.hasPrefix("http://"), let wanted = Self.authority(of: value.dropFirst(5)),
            let given = Self.authority(of: requested.dropFirst(5)), !given.hasUserInfo
        else { return false }
        guard given.host.utf8.elementsEqual(wanted.host.utf8), given.port.map(Self.isPort) ?? true else { return false }
        return given.remainder.utf8.elementsEqual(wanted.remainder.utf8)
    }

    /// The Content-Security-Policy source (CSP3 §2.3.1) that admits a redirect to `uri`, one a client may register
    /// (a loopback URI with the port it came with); nil for anything registration refuses. A page whose form leads
    /// there through redirects must allow it in `form-action`, which Chromium checks against every redirect a form
    /// submission follows. An IPv6 literal cannot be written as a CSP host, so it gets its scheme alone.
    public static func formActionSource(of uri: String) -> String? {
        guard let registration = try? RedirectURI(registering: uri) else { return nil }
        switch registration.kind {
        case .privateUseScheme:
            return String(uri[..<(uri.firstIndex(of: ":") ?? uri.endIndex)]) + ":"
        case .https, .loopback:
            let scheme = registration.kind == .https ? "https" : "http"
            guard let authority = authority(of: uri.dropFirst(scheme.count + 1)), !authority.host.hasPrefix("[") else { return scheme + ":" }
            return scheme + "://" + authority.host + (authority.port.map { ":" + $0 } ?? "")
        }
    }

    static let loopbackHosts: Set<Substring> = ["127.0.0.1", "[::1]"]

    /// RFC 3986 §3.1: a letter, then letters, digits, "+", "-" and ".".
    private static func isScheme(_ text: Substring) -> Bool {
        func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
        guard let first = text.utf8.first, isLetter(first) else { return false }
        return text.utf8.allSatisfy { isLetter($0) || (0x30...0x39).contains($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E }
    }

    /// A DNS name (letters, digits, '-', labels split by '.', none empty) or an IPv4 address, or an IPv6 literal in
    /// brackets; nothing a browser would read another way (no '%', '*', '_' or other sub-delimiters).
    private static func isHost(_ host: Substring) -> Bool {
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), host.count > 2 else { return false }
            return host.dropFirst().dropLast().utf8.allSatisfy { $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") || HexDigit.value($0) != nil }
        }
        guard host.utf8.count <= 253 else { return false }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
                && label.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) || (0x41...0x5A).contains($0) || $0 == 0x2D }
        }
    }

    /// Decimal, no sign or leading zero, 1-65535.
    private static func isPort(_ text: Substring) -> Bool {
        guard let first = text.first, first != "0", text.count <= 5, text.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(text) else {
            return false
        }
        return port <= 65535
    }

    /// `//authority` and what follows it (path, query), for the hierarchical schemes. The port is what follows the
    /// host's last colon (outside an IPv6 literal's brackets); nil when there is none.
    private static func authority(of afterScheme: Substring) -> (host: Substring, port: Substring?, hasUserInfo: Bool, remainder: Substring)? {
        guard afterScheme.hasPrefix("//") else { return nil }
        let start = afterScheme.index(afterScheme.startIndex, offsetBy: 2)
        let end = afterScheme[start...].firstIndex { $0 == "/" || $0 == "?" } ?? afterScheme.endIndex
        let authority = afterScheme[start..<end]
        let hasUserInfo = authority.contains("@")
        var host = authority
        var port: Substring?
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            host = authority[..<colon]
            port = authority[authority.index(after: colon)...]
        }
        return (host, port, hasUserInfo, afterScheme[end...])
    }
}

/// A redirect URI an operator tried to register, refused: the URI and the rule it breaks.
public struct RedirectURIError: Error, Sendable, Equatable, CustomStringConvertible {
    public let uri: String
    public let problem: String

    public var description: String { "redirect URI '\(uri.prefix(200))' is refused: \(problem)" }
}
