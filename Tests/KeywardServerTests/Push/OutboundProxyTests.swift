// Tests: the outbound proxy for push services is read from the proxy environment variables, NO_PROXY included.
import AsyncHTTPClient
@testable import KeywardServer
import XCTest

final class OutboundProxyTests: XCTestCase {
    private let fcm = "https://fcm.googleapis.com/v1/projects/p/messages:send"

    private func proxy(_ environment: [String: String], for url: String? = nil) throws -> HTTPClient.Configuration.Proxy? {
        try OutboundProxy.fromEnvironment(for: url ?? fcm, setting: "push.fcm.url", environment: environment)
    }

    func testTheSchemesVariableInEitherCase() throws {
        XCTAssertNil(try proxy([:]))
        XCTAssertEqual(try proxy(["https_proxy": "http://proxy.corp:3128"]), .server(host: "proxy.corp", port: 3128))
        XCTAssertEqual(try proxy(["HTTPS_PROXY": "proxy.corp:8080"]), .server(host: "proxy.corp", port: 8080))
        XCTAssertEqual(try proxy(["https_proxy": "http://proxy.corp"]), .server(host: "proxy.corp", port: 1080), "curl's default port")
        XCTAssertNil(try proxy(["http_proxy": "http://proxy.corp:3128"]), "an https URL ignores http_proxy")
        XCTAssertEqual(try proxy(["http_proxy": "http://proxy.corp:3128"], for: "http://127.0.0.1:9/send"), .server(host: "proxy.corp", port: 3128))
        XCTAssertEqual(try proxy(["https_proxy": "", "HTTPS_PROXY": "http://upper:1"]), .server(host: "upper", port: 1), "an empty value is unset")
        XCTAssertEqual(try proxy(["https_proxy": "socks5://socks.corp"]), .socksServer(host: "socks.corp", port: 1080))
    }

    func testCredentialsInTheProxyURLBecomeBasicAuthorization() throws {
        let configured = try XCTUnwrap(try proxy(["https_proxy": "http://push%40corp:s%3Acret@proxy.corp:3128"]))
        XCTAssertEqual(configured, .server(host: "proxy.corp", port: 3128, authorization: .basic(username: "push@corp", password: "s:cret")))
    }

    func testNoProxyExcludesHostsAndTheirSubdomains() throws {
        let proxied = ["https_proxy": "http://proxy.corp:3128"]
        for exclusion in ["googleapis.com", ".googleapis.com", "fcm.googleapis.com", "other.org, FCM.googleapis.com:443", "*"] {
            XCTAssertNil(try proxy(proxied.merging(["no_proxy": exclusion]) { $1 }), exclusion)
            XCTAssertNil(try proxy(proxied.merging(["NO_PROXY": exclusion]) { $1 }), exclusion)
        }
        for unrelated in ["apis.com", "oogleapis.com", "fcm.googleapis.com.evil", "", " , "] {
            XCTAssertNotNil(try proxy(proxied.merging(["no_proxy": unrelated]) { $1 }), unrelated)
        }
    }

    func testAProxyURLItCannotUseNamesTheVariable() {
        for bad in ["https://proxy.corp:3128", "ftp://proxy.corp", "http://:3128"] {
            XCTAssertThrowsError(try proxy(["https_proxy": bad]), bad) { error in
                let problem = error as? SettingError
                XCTAssertEqual(problem?.environmentVariable, "https_proxy", bad)
                XCTAssertEqual(problem?.setting, "push proxy", bad)
                XCTAssertTrue(problem?.problem.contains("push.fcm.url") ?? false, "\(String(describing: problem))")
            }
        }
    }
}
