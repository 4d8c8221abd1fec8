/// RFC 9449 §4.3 step 9 comparison form of a URL: the request URI without query and fragment, normalised
/// per RFC 3986 §6.2.2–6.2.3 so that `HTTPS://Server.Example.com:443/x` equals `https://server.example.com/x`.
public enum HTU {
    /// Lowercases scheme and host, drops the default port, drops query and fragment, turns an empty path into
    /// "/", upper-cases percent-escape hex and decodes escaped unreserved characters. nil unless an absolute
    /// http(s) URL without user info.
    public static func normalize(_ url: String) -> String? {
        let utf8 = Array(url.utf8)
        guard !utf8.isEmpty, utf8.count <= 8192 else { return nil }
        for byte in utf8 where byte <= 0x20 || byte >= 0x7F { return nil }

        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let scheme = String(decoding: utf8[..<colon], as: UTF8.self).lowercased()
        let defaultPort: Int
        switch scheme {
        case "https": defaultPort = 443
        case "http": defaultPort = 80
        default: return nil
        }
        let slashes = colon + 1
        guard utf8.count >= slashes + 2, utf8[slashes] == UInt8(ascii: "/"), utf8[slashes + 1] == UInt8(ascii: "/") else { return nil }

        var end = utf8.count
        if let cut = utf8[(slashes + 2)...].firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
            end = cut
        }
        let rest = utf8[(slashes + 2)..<end]
        let pathStart = rest.firstIndex(of: UInt8(ascii: "/")) ?? end
        let authority = utf8[(slashes + 2)..<pathStart]
        guard !authority.isEmpty, !authority.contains(UInt8(ascii: "@")) else { return nil }

        var hostPart = authority[...]
        var port = defaultPort
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            hostPart = authority[...close]
            let after = authority[(close + 1)...]
            if !after.isEmpty {
                guard after.first == UInt8(ascii: ":"), let parsed = parsePort(after.dropFirst(), default: defaultPort) else { return nil }
                port = parsed
            }
        } else if let portColon = authority.lastIndex(of: UInt8(ascii: ":")) {
            hostPart = authority[..<portColon]
            guard let parsed = parsePort(authority[(portColon + 1)...], default: defaultPort) else { return nil }
            port = parsed
        }
        guard !hostPart.isEmpty else { return nil }
        // Outside brackets a host is a reg-name (RFC 3986 §3.2.2): without this, "a.example:80x:" would read as
        // the host "a.example:80x" with an empty port, a result that is no URL and does not normalize again.
        if hostPart.first != UInt8(ascii: "["), !hostPart.allSatisfy(isRegNameByte) { return nil }
        let host = String(decoding: hostPart, as: UTF8.self).lowercased()
        guard let path = normalizePath(utf8[pathStart..<end]) else { return nil }

        var result = scheme + "://" + host
        if port != defaultPort { result += ":\(port)" }
        result += path
        return result
    }

    private static func parsePort(_ digits: ArraySlice<UInt8>, default defaultPort: Int) -> Int? {
        // An empty port means the default (RFC 3986 §6.2.3).
        if digits.isEmpty { return defaultPort }
        guard digits.count <= 5 else { return nil }
        var value = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value <= 65535 ? value : nil
    }


    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// unreserved, sub-delims and the '%' of pct-encoded: what RFC 3986's reg-name is made of.
    private static func isRegNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "%"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
             UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="):
            true
        default:
            isUnreserved(byte)
        }
    }

    private static func normalizePath(_ path: ArraySlice<UInt8>) -> String? {
        if path.isEmpty { return "/" }
        var out: [UInt8] = []
        out.reserveCapacity(path.count)
        var index = path.startIndex
        let hexDigits = Array("0123456789ABCDEF".utf8)
        while index < path.endIndex {
            let byte = path[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < path.endIndex, let high = HexDigit.value(path[index + 1]), let low = HexDigit.value(path[index + 2]) else {
                    return nil
                }
                let decoded = high << 4 | low
                if isUnreserved(decoded) {
                    out.append(decoded)
                } else {
                    out.append(UInt8(ascii: "%"))
                    out.append(hexDigits[Int(high)])
                    out.append(hexDigits[Int(low)])
                }
                index += 3
            } else {
                out.append(byte)
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
