// Which URLs Keyward may fetch itself: https anywhere, plain http only to this machine.
import Foundation

/// URLs Keyward itself fetches (issuer keys, discovery documents, provider endpoints): https anywhere, http only to
/// this machine, where no one on the network can change what comes back.
enum OutboundURL {
    /// Why `url` may not be fetched, or nil when it may.
    static func problem(_ url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else { return "'\(url.prefix(200))' is not an absolute URL" }
        guard components.user == nil, components.password == nil, components.fragment == nil else {
            return "the URL carries user information or a fragment"
        }
        switch scheme {
        case "https": return nil
        case "http" where isLoopback(host): return nil
        case "http": return "http is allowed only on a loopback address (127.0.0.0/8, ::1, localhost); use https for \(host)"
        default: return "scheme '\(scheme)' is not https"
        }
    }

    static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if host == "localhost" || host == "::1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil && ($0.count == 1 || $0.first != "0") }
    }
}
