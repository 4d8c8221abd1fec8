// Who sent a request, for per-client limits: trusted proxies, forwarded headers, client networks.
import HTTPTypes
import Hummingbird
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

    /// The text form of 4 or 16 address bytes; IPv6 as RFC 5952 §4 writes it (lowercase, the longest run of two or
    /// more zero groups, the first of equals, as `::`).
    static func text(of bytes: [UInt8]) -> String? {
        switch bytes.count {
        case 4:
            return bytes.map(String.init).joined(separator: ".")
        case 16:
            let groups = stride(from: 0, to: 16, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
            var longest = (start: -1, length: 1)
            var run = (start: 0, length: 0)
            for (index, group) in groups.enumerated() {
                run = group == 0 ? (run.length == 0 ? index : run.start, run.length + 1) : (index + 1, 0)
                if run.length > longest.length { longest = run }
            }
            let hex = groups.map { String($0, radix: 16) }
            guard longest.start >= 0 else { return hex.joined(separator: ":") }
            let head = hex[..<longest.start].joined(separator: ":")
            let tail = hex[(longest.start + longest.length)...].joined(separator: ":")
            return head + "::" + tail
        default:
            return nil
        }
    }

    private static func normalized(_ text: String) -> String? {
        (try? SocketAddress(ipAddress: text, port: 0))?.ipAddress
    }
}

/// Who a request's client is, for per-client limits (sign-in attempts, provider callbacks, Play Integrity checks): the
/// address `ClientAddress.resolve` finds, widened to the network one client holds. A host is commonly given a whole
/// IPv6 /64, so counting its addresses apart would give it 2^64 budgets (second security review L1).
public struct ClientNetworks: Sendable, Equatable {
    /// `http.trustedProxies`.
    public var trustedProxies: TrustedProxies
    /// `http.clientPrefixV4`: the leading bits of an IPv4 address that name one client (32: each address).
    public var prefixV4: Int
    /// `http.clientPrefixV6`: the leading bits of an IPv6 address that name one client (64: a host's usual subnet).
    public var prefixV6: Int

    public static let defaultPrefixV4 = 32
    public static let defaultPrefixV6 = 64

    public init(trustedProxies: TrustedProxies = .none, prefixV4: Int = Self.defaultPrefixV4, prefixV6: Int = Self.defaultPrefixV6) {
        self.trustedProxies = trustedProxies
        self.prefixV4 = prefixV4
        self.prefixV6 = prefixV6
    }

    /// The client's network for `request`, e.g. `198.51.100.7` or `2001:db8:1:2::/64`; `ClientAddress.unknown` when
    /// the request came over no socket.
    func client(_ request: Request, _ context: KeywardRequestContext) -> String {
        network(of: ClientAddress.resolve(peer: context.remoteAddress, headers: request.headers, trusted: trustedProxies))
    }

    /// `address` with the bits past its family's prefix cleared, written with the prefix length unless that is the
    /// whole address; text that is no IP address is returned as it is.
    func network(of address: String) -> String {
        guard var bytes = ClientAddress.bytes(of: address) else { return address }
        // An IPv4 client seen through a dual-stack socket (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2) is that IPv4 address:
        // under the IPv6 prefix every IPv4 client would be one client.
        if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF { bytes = Array(bytes[12...]) }
        let prefix = bytes.count == 4 ? prefixV4 : prefixV6
        guard prefix < bytes.count * 8 else { return ClientAddress.text(of: bytes) ?? address }
        for index in bytes.indices {
            let kept = min(8, max(0, prefix - index * 8))
            bytes[index] &= kept == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - kept))
        }
        return (ClientAddress.text(of: bytes) ?? address) + "/\(prefix)"
    }
}
