import HTTPTypes
import NIOCore
import XCTest

@testable import KeywardServer

/// Per-client limits need the client's address: the socket peer, or, behind a trusted proxy, what the proxy
/// says. A header from anyone else is ignored, and a client cannot put itself in front of the proxy's entry.
final class ClientAddressTests: XCTestCase {
    let proxies = try! TrustedProxies(parsing: "10.0.0.0/8, 192.168.1.10, fd00::/8")

    func resolve(_ peer: String, _ headers: HTTPFields = [:]) -> String {
        ClientAddress.resolve(peer: try! SocketAddress(ipAddress: peer, port: 50000), headers: headers, trusted: proxies)
    }

    func testAnUntrustedPeerIsTheClientWhateverItsHeadersSay() {
        XCTAssertEqual(resolve("203.0.113.7", [.init("X-Forwarded-For")!: "198.51.100.1"]), "203.0.113.7")
        XCTAssertEqual(resolve("203.0.113.7", [.init("Forwarded")!: "for=198.51.100.1"]), "203.0.113.7")
        XCTAssertEqual(resolve("2001:db8::5"), "2001:db8::5")
    }

    func testBehindATrustedProxyTheNearestUntrustedHopIsTheClient() {
        XCTAssertEqual(resolve("10.1.2.3", [.init("X-Forwarded-For")!: "198.51.100.1"]), "198.51.100.1")
        // The client wrote the leftmost entry itself; the proxy appended the real address.
        XCTAssertEqual(resolve("10.1.2.3", [.init("X-Forwarded-For")!: "127.0.0.1, 198.51.100.1"]), "198.51.100.1")
        // Two proxies of ours in a row.
        XCTAssertEqual(resolve("10.1.2.3", [.init("X-Forwarded-For")!: "198.51.100.1, 192.168.1.10"]), "198.51.100.1")
        XCTAssertEqual(resolve("fd00::1", [.init("X-Forwarded-For")!: "2001:db8::7"]), "2001:db8::7")
        // RFC 7239 wins over X-Forwarded-For, with quotes, brackets and ports.
        XCTAssertEqual(resolve("10.1.2.3", [.init("Forwarded")!: "for=\"[2001:db8::9]:4711\";proto=https", .init("X-Forwarded-For")!: "198.51.100.1"]), "2001:db8::9")
        XCTAssertEqual(resolve("10.1.2.3", [.init("Forwarded")!: "for=192.0.2.60:8080, for=10.9.9.9"]), "192.0.2.60")
    }

    func testTrustStopsAtAnEntryThatIsNotAnAddress() {
        XCTAssertEqual(resolve("10.1.2.3", [.init("X-Forwarded-For")!: "198.51.100.1, not-an-ip"]), "10.1.2.3")
        XCTAssertEqual(resolve("10.1.2.3", [.init("Forwarded")!: "for=unknown"]), "10.1.2.3")
        XCTAssertEqual(resolve("10.1.2.3"), "10.1.2.3", "no header: the proxy itself")
        XCTAssertEqual(ClientAddress.resolve(peer: nil, headers: [:], trusted: proxies), "unknown")
    }

    func testNetworksParseAndMatchByPrefix() throws {
        let networks = try TrustedProxies(parsing: "172.16.0.0/12 2001:db8::/32")
        XCTAssertTrue(networks.contains(ClientAddress.bytes(of: "172.31.255.1")!))
        XCTAssertFalse(networks.contains(ClientAddress.bytes(of: "172.32.0.1")!))
        XCTAssertTrue(networks.contains(ClientAddress.bytes(of: "2001:db8:ffff::1")!))
        XCTAssertFalse(networks.contains(ClientAddress.bytes(of: "2001:db9::1")!))
        XCTAssertFalse(networks.contains(ClientAddress.bytes(of: "::ffff:172.16.0.1")!), "an IPv6 address never matches an IPv4 network")
        for bad in ["10.0.0.0/33", "example.com", "10.0.0.0/x", "fd00::/129"] {
            XCTAssertThrowsError(try TrustedProxies(parsing: bad), bad)
        }
    }
}
