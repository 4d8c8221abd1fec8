// Test support: a real HTTP/1.1 listener on 127.0.0.1 that records every request and answers as the test says.
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real HTTP/1.1 listener on 127.0.0.1 that records every request it reads and answers each with `answer`
/// (one request per connection, `Connection: close`). URLSession reaches it over a socket, so "no request was
/// sent" is what the listener saw, not what a URLProtocol hook was shown.
final class LoopbackHTTPServer: Sendable {
    struct Request: Sendable {
        let method: String
        let path: String
        /// Header names lowercased.
        let headers: [String: String]
        let body: Data

        /// The body as an `application/x-www-form-urlencoded` form.
        var form: [String: String] {
            var fields: [String: String] = [:]
            for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
                fields[parts[0]] = parts.count > 1 ? parts[1] : ""
            }
            return fields
        }
    }

    struct Answer: Sendable {
        var status: Int
        var headers: [String: String] = ["Content-Type": "application/json"]
        var body: Data
    }

    let port: Int
    private let socketFD: Int32
    private let answer: @Sendable (Request) -> Answer
    private let seen = Mutex<[Request]>([])
    private let stopping = Mutex(false)

    init(answer: @escaping @Sendable (Request) -> Answer) throws {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        socketFD = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        self.answer = answer
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// The base URL, `http://127.0.0.1:PORT`.
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Every request read so far, in order.
    var requests: [Request] { seen.withLock { $0 } }

    /// Stops accepting; the socket is closed by the accepting thread.
    func stop() { stopping.withLock { $0 = true } }

    private func acceptLoop() {
        defer { close(socketFD) }
        while !stopping.withLock({ $0 }) {
            // Wakes now and then only to notice `stop()`.
            var pending = pollfd(fd: socketFD, events: Int16(POLLIN), revents: 0)
            guard poll(&pending, 1, 50) > 0 else { continue }
            let connection = accept(socketFD, nil, nil)
            guard connection >= 0 else { continue }
            serve(connection)
            close(connection)
        }
    }

    private func serve(_ connection: Int32) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let terminator: [UInt8] = Array("\r\n\r\n".utf8)
        var headerEnd: Int?
        var expected = Int.max
        while received.count < expected {
            let count = read(connection, &buffer, buffer.count)
            if count <= 0 { return }
            received += buffer[..<count]
            if headerEnd == nil, let end = Self.find(terminator, in: received) {
                headerEnd = end
                let length = Self.headers(Array(received[..<end]))["content-length"].flatMap(Int.init) ?? 0
                expected = end + terminator.count + length
            }
        }
        guard let headerEnd else { return }
        let head = Array(received[..<headerEnd])
        let requestLine = String(decoding: head, as: UTF8.self).split(separator: "\r\n").first?.split(separator: " ") ?? []
        guard requestLine.count >= 2 else { return }
        let request = Request(
            method: String(requestLine[0]), path: String(requestLine[1]), headers: Self.headers(head),
            body: Data(received[(headerEnd + terminator.count)...])
        )
        seen.withLock { $0.append(request) }
        let reply = answer(request)
        var text = "HTTP/1.1 \(reply.status) X\r\nContent-Length: \(reply.body.count)\r\nConnection: close\r\n"
        for (name, value) in reply.headers { text += "\(name): \(value)\r\n" }
        let bytes = Array((text + "\r\n").utf8) + Array(reply.body)
        _ = bytes.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }

    private static func headers(_ head: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for line in String(decoding: head, as: UTF8.self).split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return fields
    }
}
