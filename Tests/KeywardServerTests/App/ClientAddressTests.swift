// Tests: the client address for per-client limits: socket peer, trusted proxies' headers, and IPv6 /64 networks.
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

    /// Second security review L1: a client is an IPv6 /64 (a host's usual subnet) and an IPv4 address, unless the
    /// operator says otherwise; the key is the network in RFC 5952 text, so every address of it is one client.
    func testLimitsCountAnIPv6ClientPerSlash64ByDefault() {
        let defaults = ClientNetworks()
        XCTAssertEqual(defaults.network(of: "2001:db8:1:2::1"), "2001:db8:1:2::/64")
        XCTAssertEqual(defaults.network(of: "2001:DB8:1:2:ffff:ffff:ffff:fffe"), "2001:db8:1:2::/64")
        XCTAssertEqual(defaults.network(of: "2001:db8:0:0:1::"), "2001:db8::/64")
        XCTAssertEqual(defaults.network(of: "fe80::1:0:0:1"), "fe80::/64")
        XCTAssertEqual(defaults.network(of: "198.51.100.7"), "198.51.100.7", "IPv4: each address")
        XCTAssertEqual(defaults.network(of: ClientAddress.unknown), ClientAddress.unknown)
        XCTAssertEqual(defaults.network(of: "::ffff:198.51.100.7"), "198.51.100.7", "an IPv4 client on a dual-stack socket is its IPv4 address")
        XCTAssertEqual(defaults.network(of: "::ffff:198.51.100.8"), "198.51.100.8", "not the /64 every such address falls in")
        XCTAssertEqual(ClientNetworks(prefixV4: 24).network(of: "::ffff:c633:6407"), "198.51.100.0/24")

        let wide = ClientNetworks(prefixV4: 24, prefixV6: 48)
        XCTAssertEqual(wide.network(of: "198.51.100.7"), "198.51.100.0/24")
        XCTAssertEqual(wide.network(of: "2001:db8:1:2::1"), "2001:db8:1::/48")
        XCTAssertEqual(ClientNetworks(prefixV6: 128).network(of: "2001:db8::7"), "2001:db8::7")
        XCTAssertEqual(ClientNetworks(prefixV4: 20).network(of: "198.51.127.255"), "198.51.112.0/20", "a prefix inside a byte")
        XCTAssertEqual(ClientNetworks(prefixV6: 60).network(of: "2001:db8:1:2ff::"), "2001:db8:1:2f0::/60")
    }

    func testIPv6TextIsRFC5952() {
        XCTAssertEqual(ClientAddress.text(of: [UInt8](repeating: 0, count: 16)), "::")
        XCTAssertEqual(ClientAddress.text(of: [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1]), "2001:db8::1")
        // Two runs of zero groups: the longer is compressed; of equals, the first; a single zero group is not.
        XCTAssertEqual(ClientAddress.text(of: [0x20, 0x01, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0]), "2001:0:1::1:0")
        XCTAssertEqual(ClientAddress.text(of: [0x20, 0x01, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1]), "2001::1:0:0:1:1")
        XCTAssertEqual(ClientAddress.text(of: [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]), "2001:db8:1:1:1:1:1:1")
        XCTAssertEqual(ClientAddress.text(of: [198, 51, 100, 7]), "198.51.100.7")
        XCTAssertNil(ClientAddress.text(of: [1, 2, 3]))
    }
}
