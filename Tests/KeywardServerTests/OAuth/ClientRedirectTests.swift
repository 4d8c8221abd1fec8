// Tests: what a client registers for the authorization endpoint is checked, stored and read back on both engines.
import KeywardHTTPInput
@testable import KeywardServer
import XCTest

/// Issue 28's client registration: redirect URIs (checked by `RedirectURI`), post-logout redirect URIs, first-party
/// and PAR-required clients, through `ClientService` and its SQL store.
final class ClientRedirectTests: XCTestCase {
    func testAPublicClientsRedirectsAreStoredAndMatchedOnBothEngines() async throws {
        try await TestServer.forEachEngine { server, _ in
            let clients = server.runtime.oauth.clients
            let redirects = try ClientRedirects(
                redirectURIs: ["com.example.app:/oauth2redirect", "http://127.0.0.1/callback", "com.example.app:/oauth2redirect"],
                postLogoutRedirectURIs: ["com.example.app:/signed-out"], firstParty: true, requirePAR: true
            )
            XCTAssertEqual(redirects.redirectURIs.map(\.value), ["com.example.app:/oauth2redirect", "http://127.0.0.1/callback"], "a repeat is kept once")
            let created = try await clients.createPublicClient(realm: "demo", clientId: "native-app", redirects: redirects)
            let read = try await clients.client(realm: "demo", clientId: "native-app")
            XCTAssertEqual(read?.clientId, created.clientId)
            XCTAssertEqual(read?.isPublic, true)
            XCTAssertEqual(read?.redirects, redirects)
            XCTAssertEqual(read?.redirectURI(matching: "http://127.0.0.1:49152/callback")?.kind, .loopback)
            XCTAssertNil(read?.redirectURI(matching: "com.example.app:/oauth2redirect/"))
            XCTAssertNil(read?.redirectURI(matching: "com.example.app:/signed-out"), "a post-logout URI is not a redirect URI")

            let (web, _) = try await clients.createClient(
                realm: "demo", clientId: "web-app",
                redirects: try ClientRedirects(redirectURIs: ["https://app.example.com/cb"], postLogoutRedirectURIs: [], firstParty: false, requirePAR: false)
            )
            let listed = try await clients.listClients(realm: "demo").first { $0.clientId == "web-app" }
            XCTAssertEqual(listed?.isPublic, false)
            XCTAssertEqual(listed?.secretHash, web.secretHash)
            XCTAssertEqual(listed?.redirectURIs.map(\.value), ["https://app.example.com/cb"])
            XCTAssertEqual(listed?.firstParty, false)
            XCTAssertEqual(listed?.requirePAR, false)
        }
    }

    func testAClientWithoutRedirectsReadsBackWithNone() async throws {
        try await TestServer.forEachEngine { server, _ in
            let created = try await server.runtime.oauth.clients.createPublicClient(realm: "demo", clientId: "host-token-app")
            let read = try await server.runtime.oauth.clients.client(realm: "demo", clientId: "host-token-app")
            XCTAssertEqual(read?.clientId, created.clientId)
            XCTAssertEqual(read?.redirects, ClientRedirects())
        }
    }

    func testARefusedURINamesTheSettingAndTheRule() {
        XCTAssertThrowsError(try ClientRedirects(redirectURIs: ["https://ok.example/cb", "http://app.example/cb"], postLogoutRedirectURIs: [], firstParty: false, requirePAR: false)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix("--redirect-uri: redirect URI 'http://app.example/cb' is refused: http is allowed only on the loopback"), text)
        }
        XCTAssertThrowsError(try ClientRedirects(redirectURIs: [], postLogoutRedirectURIs: ["https://ok.example/bye#x"], firstParty: false, requirePAR: false)) { error in
            XCTAssertTrue("\(error)".hasPrefix("--post-logout-redirect-uri: "), "\(error)")
        }
        let many = (0...ClientRedirects.maxURIs).map { "https://app.example.com/cb\($0)" }
        XCTAssertThrowsError(try ClientRedirects(redirectURIs: many, postLogoutRedirectURIs: [], firstParty: false, requirePAR: false)) { error in
            XCTAssertEqual("\(error)", "--redirect-uri: 21 URIs given, at most 20")
        }
    }
}
