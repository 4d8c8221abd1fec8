import HTTPTypes
import NIOCore

/// Networks whose requests are relayed for someone else (`http.trustedProxies`): a load balancer or TLS proxy
/// in front of Keyward. Only from these peers are `Forwarded` / `X-Forwarded-For` believed.
public struct TrustedProxies: Sendable, Equatable {
    struct Network: Sendable, Equatable {
        let address: [UInt8]
        let prefixLength: Int

        func contains(_ candidate: [UInt8]) -> Bool {
            guard candidate.count == address.count else { return false }
            var remaining = prefixLength
            for (a, b) in zip(address, candidate) where remaining > 0 {
                let bits = min(8, remaining)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if a & mask != b & mask { return false }
                remaining -= bits
            }
            return true
        }
    }

    let networks: [Network]

    public static let none = TrustedProxies(networks: [])

    init(networks: [Network]) {
        self.networks = networks
    }

    /// `10.0.0.0/8`, `192.168.1.10` (one address), `fd00::/8`; comma- or space-separated.
    public init(parsing list: String) throws(ClientAddressError) {
        var networks: [Network] = []
        for entry in list.split(whereSeparator: { $0 == "," || $0 == " " }) {
            let parts = entry.split(separator: "/", maxSplits: 1)
            guard let address = ClientAddress.bytes(of: String(parts[0])) else { throw ClientAddressError(entry: String(entry)) }
            let bits = address.count * 8
            let prefixLength = parts.count == 2 ? Int(parts[1]) : bits
            guard let prefixLength, (0...bits).contains(prefixLength) else { throw ClientAddressError(entry: String(entry)) }
            networks.append(Network(address: address, prefixLength: prefixLength))
        }
        self.networks = networks
    }

    func contains(_ address: [UInt8]) -> Bool { networks.contains { $0.contains(address) } }
}

public struct ClientAddressError: Error, CustomStringConvertible, Equatable {
    public let entry: String
    public var description: String { "'\(entry.prefix(64))' is not an IP address or CIDR network (e.g. 10.0.0.0/8, fd00::/8)" }
}

/// Who sent a request, for per-client limits: the socket's peer, unless that peer is a trusted proxy; then the
/// nearest address in `Forwarded` (RFC 7239) or else `X-Forwarded-For` that is not itself a trusted proxy,
/// read from the right, since everything left of the first untrusted hop could have been written by the client.
public enum ClientAddress {
    public static let unknown = "unknown"

    static func resolve(peer: SocketAddress?, headers: HTTPFields, trusted: TrustedProxies) -> String {
        guard let peerText = peer?.ipAddress, let peerBytes = bytes(of: peerText) else { return unknown }
        guard trusted.contains(peerBytes) else { return peerText }
        var chosen = peerText
        for hop in forwardedChain(headers).reversed() {
            guard let hopBytes = bytes(of: hop) else { return chosen }  // unreadable: trust ends here
            chosen = normalized(hop) ?? hop
            if !trusted.contains(hopBytes) { return chosen }
        }
        return chosen
    }

    /// The addresses a request passed through, client first: `Forwarded: for=` when present, else X-Forwarded-For.
    static func forwardedChain(_ headers: HTTPFields) -> [String] {
        let forwarded = headers[values: .init("Forwarded")!]
        if !forwarded.isEmpty {
            return forwarded.flatMap { $0.split(separator: ",") }.compactMap { element in
                for pair in element.split(separator: ";") {
                    let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                    if parts.count == 2, parts[0].lowercased() == "for" { return unquoted(parts[1]) }
                }
                return nil
            }
        }
        return headers[values: .init("X-Forwarded-For")!].flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// `"[2001:db8::1]:4711"` → `2001:db8::1`, `192.0.2.1:80` → `192.0.2.1`.
    private static func unquoted(_ value: String) -> String {
        var text = value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2 ? String(value.dropFirst().dropLast()) : value
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            text = String(text[text.index(after: text.startIndex)..<close])
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            text = String(text[..<colon])
        }
        return text
    }

    /// The address's bytes (4 for IPv4, 16 for IPv6), or nil when it is not a literal IP address.
    static func bytes(of text: String) -> [UInt8]? {
        guard text.utf8.count <= 64, let address = try? SocketAddress(ipAddress: text, port: 0) else { return nil }
        switch address {
        case .v4(let v4): return withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
        case .v6(let v6): return withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
        default: return nil
        }
    }

    private static func normalized(_ text: String) -> String? {
        (try? SocketAddress(ipAddress: text, port: 0))?.ipAddress
    }
}
