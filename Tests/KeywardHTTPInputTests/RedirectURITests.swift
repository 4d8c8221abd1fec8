// Tests: which redirect URIs a client may register, and that a request's matches only byte for byte (loopback port aside).
import KeywardHTTPInput
import XCTest

/// RFC 8252 §7–8 and RFC 9700 §4.1.3, as `RedirectURI` applies them.
final class RedirectURITests: XCTestCase {
    func testTheThreeKindsANativeOrWebAppRegisters() throws {
        XCTAssertEqual(try RedirectURI(registering: "https://app.example.com/oauth/callback").kind, .https)
        XCTAssertEqual(try RedirectURI(registering: "https://app.example.com:8443/cb?from=keyward").kind, .https)
        XCTAssertEqual(try RedirectURI(registering: "https://192.0.2.10/cb").kind, .https)
        XCTAssertEqual(try RedirectURI(registering: "https://[2001:db8::1]:8443/cb").kind, .https)
        XCTAssertEqual(try RedirectURI(registering: "com.example.app:/oauth2redirect").kind, .privateUseScheme)
        XCTAssertEqual(try RedirectURI(registering: "com.example.app://callback").kind, .privateUseScheme)
        XCTAssertEqual(try RedirectURI(registering: "http://127.0.0.1/callback").kind, .loopback)
        XCTAssertEqual(try RedirectURI(registering: "http://127.0.0.1:51004/oauth2redirect/example-provider").kind, .loopback)
        XCTAssertEqual(try RedirectURI(registering: "http://[::1]:8080/").kind, .loopback)
    }

    func testRegistrationRefusesWhatTheRFCsRuleOutAndSaysWhy() {
        let refused: [(String, String)] = [
            ("", "empty"),
            ("https://app.example.com/cb#done", "fragment"),
            ("https://app.example.com/c b", "printable ASCII"),
            ("https://app.example.com/caf\u{E9}", "printable ASCII"),
            ("HTTPS://app.example.com/cb", "lower case"),
            ("https:///cb", "needs a host"),
            ("https:app.example.com/cb", "needs a host"),
            ("https://user:pw@app.example.com/cb", "user name or password"),
            ("https://app.example.com:0/cb", "1-65535"),
            ("https://app.example.com:65536/cb", "1-65535"),
            ("https://app.example.com:08443/cb", "1-65535"),
            ("http://app.example.com/cb", "only on the loopback"),
            ("http://localhost:8080/cb", "instead of localhost"),
            ("http://127.0.0.1@evil.example/cb", "user name or password"),
            ("https://evil.example\\.app.example.com/cb", "backslash"),
            ("com.example.app:/cb\\x", "backslash"),
            ("https://[evil/cb", "not a host name"),
            ("https://a.example:443:1/cb", "not a host name"),
            ("https://*.example.com/cb", "not a host name"),
            ("https://a%2e.example/cb", "not a host name"),
            ("https://a..example/cb", "not a host name"),
            ("https://-a.example/cb", "not a host name"),
            ("https://a_b.example/cb", "not a host name"),
            ("https://app.example.com", "needs a path"),
            ("https://app.example.com?x=1", "needs a path"),
            ("com.example.app://user@host/cb", "user name or password"),
            ("http://127.0.0.1:8080", "needs a path"),
            ("http://127.0.0.2/cb", "only on the loopback"),
            ("myapp:/cb", "reverse domain name"),
            ("javascript:alert(1)", "reverse domain name"),
            ("data:text/html,hi", "reverse domain name"),
            ("com.example.app:cb", "com.example.app:/path"),
            ("1com.example:/cb", "not a URI scheme"),
            ("no-scheme-here", "no scheme"),
            (String(repeating: "a", count: 2050) + ".b:/cb", "longer than"),
        ]
        for (uri, reason) in refused {
            XCTAssertThrowsError(try RedirectURI(registering: uri), uri) { error in
                let text = (error as? RedirectURIError)?.description ?? "\(error)"
                XCTAssertTrue(text.contains(reason), "\(uri.prefix(60)): \(text)")
            }
        }
    }

    func testARequestMatchesOnlyTheSameBytes() throws {
        let https = try RedirectURI(registering: "https://app.example.com/cb")
        XCTAssertTrue(https.matches("https://app.example.com/cb"))
        for other in [
            "https://app.example.com/cb/", "https://app.example.com/cb?x=1", "https://APP.example.com/cb", "https://app.example.com/CB",
            "https://app.example.com:443/cb", "https://app.example.com/%63b", "https://app.example.com/cb#x", "http://app.example.com/cb",
            "https://app.example.com/cb\u{0}", "https://app.example.com/cb ", "https://app.example.com.evil.example/cb",
        ] {
            XCTAssertFalse(https.matches(other), other)
        }
        let custom = try RedirectURI(registering: "com.example.app:/oauth2redirect")
        XCTAssertTrue(custom.matches("com.example.app:/oauth2redirect"))
        XCTAssertFalse(custom.matches("com.example.app://oauth2redirect"))
        XCTAssertFalse(custom.matches("com.example.App:/oauth2redirect"))
    }

    func testALoopbackURIMatchesAnyPortAndNothingElse() throws {
        let loopback = try RedirectURI(registering: "http://127.0.0.1:51004/oauth2redirect")
        for port in ["", ":1", ":51004", ":60123", ":65535"] {
            XCTAssertTrue(loopback.matches("http://127.0.0.1\(port)/oauth2redirect"), port)
        }
        for other in [
            "http://127.0.0.1:0/oauth2redirect", "http://127.0.0.1:65536/oauth2redirect", "http://127.0.0.1:080/oauth2redirect",
            "http://127.0.0.1:/oauth2redirect", "http://127.0.0.1:80a/oauth2redirect", "http://[::1]:51004/oauth2redirect",
            "http://localhost:51004/oauth2redirect", "https://127.0.0.1:51004/oauth2redirect", "HTTP://127.0.0.1:51004/oauth2redirect",
            "http://127.0.0.1:51004/oauth2redirect/", "http://127.0.0.1:51004/oauth2redirect?x", "http://127.0.0.1:51004/other",
            "http://evil@127.0.0.1:51004/oauth2redirect", "http://127.0.0.1:51004@evil.example/oauth2redirect",
            "http://127.0.0.1.evil.example/oauth2redirect", "http:127.0.0.1/oauth2redirect",
        ] {
            XCTAssertFalse(loopback.matches(other), other)
        }
        let six = try RedirectURI(registering: "http://[::1]/cb")
        XCTAssertTrue(six.matches("http://[::1]:8123/cb"))
        XCTAssertFalse(six.matches("http://[::1]:8123/cb/"))
        XCTAssertFalse(six.matches("http://[0:0:0:0:0:0:0:1]:8123/cb"))
    }

    /// The CSP form-action source of a redirect: an https or loopback origin with its port, a private-use scheme, the
    /// scheme alone for an IPv6 literal (no CSP host can name one), nothing for what registration refuses.
    func testTheFormActionSourceOfARedirectIsItsOriginOrScheme() {
        let cases: [(String, String?)] = [
            ("https://app.example.com/cb?x=1", "https://app.example.com"),
            ("https://app.example.com:8443/cb", "https://app.example.com:8443"),
            ("http://127.0.0.1:49152/cb", "http://127.0.0.1:49152"),
            ("http://127.0.0.1/cb", "http://127.0.0.1"),
            ("http://[::1]:8123/cb", "http:"),
            ("https://[2001:db8::1]/cb", "https:"),
            ("com.example.app:/oauth2redirect", "com.example.app:"),
            ("http://evil.example/cb", nil),
            ("javascript:alert(1)", nil),
            ("https://app.example.com/cb#frag", nil),
        ]
        for (uri, source) in cases {
            XCTAssertEqual(RedirectURI.formActionSource(of: uri), source, uri)
        }
    }
}
