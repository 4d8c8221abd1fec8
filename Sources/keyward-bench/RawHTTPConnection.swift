// A minimal blocking HTTP/1.1 keep-alive client, so load generation costs little CPU beside the server.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A minimal blocking HTTP/1.1 keep-alive client for loopback load generation. Requests are pre-serialised
/// bytes; the response is read up to its Content-Length. It costs far less CPU per request than a general
/// client, so on a small machine the measured figure is the server's, not the load generator's.
final class RawHTTPConnection {
    struct Response {
        let status: Int
        let body: [UInt8]
        /// Header lines as sent, names lower-cased.
        var headers: [(name: String, value: String)] = []

        func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }

        /// The cookie the answer sets, as `name=value` to send back.
        var cookie: String? { header("set-cookie")?.split(separator: ";").first.map(String.init) }
    }

    private let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            close(fd)
            throw BenchError("cannot connect to 127.0.0.1:\(port)")
        }
        var noDelay: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    /// `GET`/`POST` request bytes for `path` with the given headers and body.
    static func request(method: String, path: String, port: Int, headers: [(String, String)], body: String = "") -> [UInt8] {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { text += "Content-Length: \(body.utf8.count)\r\n" }
        text += "\r\n" + body
        return Array(text.utf8)
    }

    func send(_ request: [UInt8]) throws -> Response {
        try write(request)
        return try readResponse()
    }

    private func readResponse() throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        while headerEnd == nil {
            headerEnd = Self.find(separator, in: buffer).map { $0 + separator.count }
            if headerEnd == nil { try fill() }
        }
        let head = String(decoding: buffer[..<headerEnd!], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.split(separator: " ").count >= 2, let status = Int(statusLine.split(separator: " ")[1]) else {
            throw BenchError("malformed status line")
        }
        var length = 0
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = String(line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" })
            headers.append((name, value))
            if name == "content-length" { length = Int(value) ?? 0 }
        }
        while buffer.count < headerEnd! + length { try fill() }
        let body = Array(buffer[headerEnd!..<(headerEnd! + length)])
        buffer.removeFirst(headerEnd! + length)
        return Response(status: status, body: body, headers: headers)
    }

    /// Reads a streamed (SSE) body until `marker` appears in it, leaving the bytes in the buffer.
    func readUntil(_ marker: String) throws {
        let bytes = Array(marker.utf8)
        while Self.find(bytes, in: buffer) == nil { try fill() }
    }

    /// Reads a chunked (SSE) response through its last chunk and drops it, so the connection can carry the next
    /// request as a browser's keep-alive connection would.
    func readToEndOfChunkedBody() throws {
        let lastChunk: [UInt8] = Array("\r\n0\r\n\r\n".utf8)
        var end = Self.find(lastChunk, in: buffer)
        while end == nil {
            try fill()
            end = Self.find(lastChunk, in: buffer)
        }
        buffer.removeFirst(end! + lastChunk.count)
    }

    /// Where `needle` starts in `haystack`, at or after `start` (memchr + memcmp: Foundation's generic search cost
    /// the load generator a third of its CPU, which the server then did not get).
    /// The text between the first `start` and the next `end`, `&amp;` decoded (a byte search: the load generator
    /// shares the cores with the server).
    static func between(_ body: [UInt8], _ start: String, _ end: String) -> String? {
        let opening = Array(start.utf8)
        guard let from = RawHTTPConnection.find(opening, in: body).map({ $0 + opening.count }),
            let to = RawHTTPConnection.find(Array(end.utf8), in: body, from: from)
        else { return nil }
        return String(decoding: body[from..<to], as: UTF8.self).replacingOccurrences(of: "&amp;", with: "&")
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int = 0) -> Int? {
        guard let first = needle.first, start <= haystack.count else { return nil }
        return haystack.withUnsafeBytes { hay in
            needle.withUnsafeBytes { pin in
                guard let base = hay.baseAddress else { return nil }
                var position = start
                while position + pin.count <= hay.count {
                    guard let hit = memchr(base + position, Int32(first), hay.count - position - pin.count + 1) else { return nil }
                    let offset = base.distance(to: UnsafeRawPointer(hit))
                    if memcmp(base + offset, pin.baseAddress!, pin.count) == 0 { return offset }
                    position = offset + 1
                }
                return nil
            }
        }
    }

    /// Sends without reading a response (the SSE request, whose body never ends by itself).
    func write(_ request: [UInt8]) throws {
        var written = 0
        while written < request.count {
            let result = request[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard result > 0 else { throw BenchError("write failed: errno \(errno)") }
            written += result
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { throw BenchError("connection closed by the server") }
        buffer.append(contentsOf: chunk[..<count])
    }
}

extension RawHTTPConnection {
    /// A browser session of `username` in the demo realm, signed in with the password `bench-password` (no phone:
    /// the realm does not ask for one); its cookie.
    static func signIn(_ username: String, port: Int) throws -> String {
        let connection = try RawHTTPConnection(port: port)
        let login = try connection.send(RawHTTPConnection.request(method: "GET", path: "/realms/demo/login", port: port, headers: []))
        guard let anonymous = login.cookie,
            let csrf = RawHTTPConnection.between(login.body, #"name="csrf" value=""#, "\"")
        else { throw BenchError("login page without cookie or CSRF field") }
        let signedIn = try connection.send(RawHTTPConnection.request(
            method: "POST", path: "/realms/demo/login", port: port,
            headers: [("Cookie", anonymous), ("Content-Type", "application/x-www-form-urlencoded")],
            body: "csrf=\(csrf)&username=\(username)&password=bench-password"
        ))
        guard signedIn.status == 303, signedIn.header("location") == "/realms/demo/account",
            let cookie = signedIn.cookie
        else { throw BenchError("password sign-in failed: \(signedIn.status) \(signedIn.header("location") ?? "")") }
        return cookie
    }
}

extension KeywardCLI {
    /// `count` users of the demo realm named `prefix-0`, `prefix-1`, …, each created with the password `bench-password`
    /// and signed in from a browser of its own; their session cookies.
    func signedInBrowsers(_ prefix: String, count: Int, port: Int) throws -> [String] {
        try (0..<count).map { index in
            let username = "\(prefix)-\(index)"
            try run(["users", "create", "--realm", "demo", username], environment: ["KEYWARD_NEW_PASSWORD": "bench-password", "KEYWARD_ACCOUNTS_BCRYPT_COST": "4"])
            return try RawHTTPConnection.signIn(username, port: port)
        }
    }
}
