// Tests: DPoP htu comparison normalizes URLs as RFC 3986 says and ignores query and fragment.
import XCTest
@testable import KeywardJOSE

/// htu comparison follows RFC 3986 §6.2.2–6.2.3 and ignores query and fragment (RFC 9449 §4.3 step 9).
final class HTUTests: XCTestCase {
    func testNormalization() {
        XCTAssertEqual(HTU.normalize("HTTPS://Server.Example.COM:443/token?x=1#f"), "https://server.example.com/token")
        XCTAssertEqual(HTU.normalize("http://a.example:80"), "http://a.example/")
        XCTAssertEqual(HTU.normalize("http://a.example:8080/p"), "http://a.example:8080/p")
        XCTAssertEqual(HTU.normalize("https://a.example:/p"), "https://a.example/p")
        XCTAssertEqual(HTU.normalize("https://a.example/%7euser/%2f"), "https://a.example/~user/%2F")
        XCTAssertEqual(HTU.normalize("https://[::1]:8443/x"), "https://[::1]:8443/x")
        XCTAssertEqual(HTU.normalize("https://a.example?q"), "https://a.example/")
    }

    func testRejectsNonHTTPAndOddForms() {
        for url in ["ftp://a.example/", "a.example/x", "/token", "https:/a.example", "https://", "https://user@a.example/",
                    "https://a.example:99999/", "https://a.example:x/", "https://a b/", "https://a.example/%zz", ""] {
            XCTAssertNil(HTU.normalize(url), url)
        }
    }

    /// Found by fuzz/ (target htu): "a.example:80ftp:" was read as the host "a.example:80ftp" with an empty port, so
    /// the result was not a URL and normalizing it again gave nil. A host is an IP literal in brackets or an RFC 3986
    /// reg-name, which has no ':' (nor '[' or ']').
    func testHostWithAColonIsRefused() {
        for url in ["http://a.example:80ftp://a.example/", "https://a:b:/", "https://a.example:443:/x", "https://a]b/", "https://a[b/"] {
            XCTAssertNil(HTU.normalize(url), url)
        }
        for url in ["https://a.example:/p", "https://[::1]/x", "https://xn--bcher-kva.example/", "https://a!$&'()*+,;=b/"] {
            let normalized = HTU.normalize(url)
            XCTAssertNotNil(normalized, url)
            XCTAssertEqual(normalized.flatMap(HTU.normalize), normalized, "normalizing is idempotent for \(url)")
        }
    }

    func testDistinguishesSchemeHostPortPath() {
        let base = HTU.normalize("https://a.example/token")
        for other in ["http://a.example/token", "https://b.example/token", "https://a.example:8443/token",
                      "https://a.example/token/", "https://a.example/Token"] {
            XCTAssertNotEqual(HTU.normalize(other), base, other)
        }
    }
}
