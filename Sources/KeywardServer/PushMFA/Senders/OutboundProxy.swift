// The HTTP or SOCKS proxy a push service is reached through, read from the environment as curl reads it.
import AsyncHTTPClient
import Foundation

/// The HTTP proxy a push service is reached through, from the environment the way curl (and the original's FCM
/// sender) read it: `https_proxy`/`HTTPS_PROXY` for https URLs, `http_proxy`/`HTTP_PROXY` for http, except for
/// hosts listed in `no_proxy`/`NO_PROXY` (comma-separated names, a leading dot optional, `*` for all; ports are
/// ignored). The proxy URL is `http://[user:password@]host[:port]` (port 1080 when missing, as curl) or
/// `socks5://host[:port]`.
enum OutboundProxy {
    static let variables: Set<String> = ["https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "no_proxy", "NO_PROXY"]

    static func fromEnvironment(
        for target: String, setting: String, environment: [String: String]
    ) throws(SettingError) -> HTTPClient.Configuration.Proxy? {
        guard let url = URL(string: target), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        let names = scheme == "https" ? ["https_proxy", "HTTPS_PROXY"] : ["http_proxy", "HTTP_PROXY"]
        guard let (name, value) = names.lazy.compactMap({ name in environment[name].map { (name, $0) } }).first(where: { !$0.1.isBlank }) else {
            return nil
        }
        let exclusions = (environment["no_proxy"] ?? environment["NO_PROXY"] ?? "").split(separator: ",")
        if exclusions.contains(where: { Self.excludes($0, host: host) }) { return nil }
        return try proxy(value, variable: name, setting: setting)
    }

    private static func excludes(_ entry: Substring, host: String) -> Bool {
        var pattern = entry.trimmingBlanks.lowercased()
        if pattern == "*" { return true }
        // "host:port": the port is ignored (a bare IPv6 address has more than one colon and is kept whole).
        if pattern.filter({ $0 == ":" }).count == 1, let colon = pattern.firstIndex(of: ":") {
            pattern = String(pattern[..<colon])
        }
        if pattern.hasPrefix(".") { pattern.removeFirst() }
        guard !pattern.isEmpty else { return false }
        return host == pattern || host.hasSuffix("." + pattern)
    }

    private static func proxy(_ value: String, variable: String, setting: String) throws(SettingError) -> HTTPClient.Configuration.Proxy {
        let text = value.contains("://") ? value : "http://" + value
        let problem = "the proxy for \(setting) comes from \(variable), which must be http://[user:password@]host[:port] or socks5://host[:port]"
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            throw SettingError(setting: "push proxy", problem: problem, environmentVariable: variable)
        }
        switch scheme {
        case "http":
            let port = url.port ?? 1080
            guard let user = url.user.flatMap({ $0.removingPercentEncoding }) else { return .server(host: host, port: port) }
            let password = url.password.flatMap { $0.removingPercentEncoding } ?? ""
            return .server(host: host, port: port, authorization: .basic(username: user, password: password))
        case "socks5", "socks5h":
            return .socksServer(host: host, port: url.port ?? 1080)
        default:
            throw SettingError(setting: "push proxy", problem: problem, environmentVariable: variable)
        }
    }
}
