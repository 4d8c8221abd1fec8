// A loopback JWKS endpoint standing in for a host's auth provider in the host-token benchmark.
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A host auth provider's JWKS endpoint for the `host-token` scenario: a blocking loopback listener on a thread of
/// its own that answers every request with the same JWK Set and closes the connection. The server caches the set
/// for as long as `Cache-Control: max-age` says, so it fetches once per run and this need not be fast.
final class JWKSResponder: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let response: [UInt8]
    private let served = Atomic<Int>(0)

    /// Requests answered so far (the server's JWKS fetches).
    var fetches: Int { served.load(ordering: .relaxed) }

    var url: String { "http://127.0.0.1:\(port)/jwks" }

    init(jwks body: [UInt8], maxAge: Int = 3600) throws {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nCache-Control: max-age=\(maxAge)\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        response = Array(head.utf8) + body
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("JWKS responder: socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound, listen(fd, 16) == 0 else {
            close(fd)
            throw BenchError("JWKS responder: cannot listen on 127.0.0.1")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in serve() }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Wakes the accept loop, which then ends.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
    }

    deinit { close(listener) }

    private func serve() {
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            readRequestHead(connection)
            writeAll(connection)
            served.add(1, ordering: .relaxed)
            close(connection)
        }
    }

    /// Reads until the blank line that ends the request's head (a GET has no body), or the peer stops sending.
    private func readRequestHead(_ connection: Int32) {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let end = Array("\r\n\r\n".utf8)
        while received.count < 64 * 1024 {
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return }
            received += chunk[..<count]
            if RawHTTPConnection.find(end, in: received) != nil { return }
        }
    }

    private func writeAll(_ connection: Int32) {
        var offset = 0
        while offset < response.count {
            let written = response.withUnsafeBytes { send(connection, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return }
            offset += written
        }
    }
}
