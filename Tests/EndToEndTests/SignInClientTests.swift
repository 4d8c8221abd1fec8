// Tests: KeywardKit's SignInClient against a live server: a person signs in through the pages, the app redeems the
// code with DPoP, refreshes with the same key, calls userinfo, and signs out.
import Foundation
import KeywardJOSE
import KeywardKit
import KeywardServer
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class SignInClientTests: XCTestCase {
    func testAnAppSignsAPersonInRefreshesAndSignsOut() async throws {
        try await LiveServer.run { baseURL, runtime in
            let issuer = baseURL + "/realms/demo"
            let redirects = try ClientRedirects(
                redirectURIs: ["com.example.app:/cb"], postLogoutRedirectURIs: ["com.example.app:/signed-out"], firstParty: true, requirePAR: false
            )
            _ = try await runtime.oauth.clients.createPublicClient(realm: "demo", clientId: "app", requireDPoP: true, scope: "profile", redirects: redirects)
            let configuration = SignInClient.Configuration(
                issuer: issuer, clientId: "app", redirectURI: "com.example.app:/cb", scopes: ["openid", "profile"],
                postLogoutRedirectURI: "com.example.app:/signed-out"
            )
            for pushRequests in [false, true] {
                var pushing = configuration
                pushing.pushRequests = pushRequests
                let key = try SigningKey.generate(.es256)
                let client = SignInClient(configuration: pushing, dpop: DPoPSigner(key: key))
                let request = try await client.startSignIn()
                XCTAssertEqual(request.url.absoluteString.contains("request_uri="), pushRequests)
                let redirect = try await PageWalker(baseURL: baseURL).signIn(at: request.url, username: "test", password: "test")
                XCTAssertTrue(redirect.absoluteString.hasPrefix("com.example.app:/cb?code="), redirect.absoluteString)

                // A redirect with another state is refused before anything is sent.
                let forged = URL(string: redirect.absoluteString.replacingOccurrences(of: "state=", with: "state=x"))!
                do {
                    _ = try await client.finishSignIn(request, redirect: forged)
                    XCTFail("a foreign state was accepted")
                } catch let error as KeywardKitError {
                    guard case .signInMismatch = error else { return XCTFail("\(error)") }
                }

                let tokens = try await client.finishSignIn(request, redirect: redirect)
                XCTAssertEqual(tokens.amr, ["pwd"])
                XCTAssertEqual(tokens.acr, "urn:keyward:acr:1fa")
                let access = try UnverifiedJWT(tokens.accessToken).claims
                XCTAssertEqual(access["cnf"]?.objectValue?["jkt"]?.stringValue, client.dpop.thumbprint, "bound to the app's key")
                let info = try await client.userInfo()
                XCTAssertEqual(info["preferred_username"]?.stringValue, "test")
                XCTAssertEqual(info["sub"]?.stringValue, tokens.subject)

                let refreshed = try await client.refresh()
                XCTAssertNotEqual(refreshed.refreshToken, tokens.refreshToken, "rotated")
                XCTAssertNotEqual(refreshed.accessToken, tokens.accessToken)

                // Another key cannot use the kept refresh token.
                let thief = SignInClient(configuration: pushing, dpop: DPoPSigner(key: try SigningKey.generate(.es256)), tokens: refreshed)
                do {
                    _ = try await thief.refresh()
                    XCTFail("another key refreshed")
                } catch let error as KeywardKitError {
                    guard case .server(400, "invalid_dpop_proof", _) = error else { return XCTFail("\(error)") }
                }

                let endSession = try await client.signOut()
                let logout = try XCTUnwrap(endSession)
                XCTAssertTrue(logout.absoluteString.hasPrefix(issuer + "/protocol/openid-connect/logout?id_token_hint="))
                let afterSignOut = SignInClient(configuration: pushing, dpop: DPoPSigner(key: key), tokens: refreshed)
                do {
                    _ = try await afterSignOut.refresh()
                    XCTFail("a revoked sign-in refreshed")
                } catch let error as KeywardKitError {
                    guard case .server(400, "invalid_grant", _) = error else { return XCTFail("\(error)") }
                }
            }
        }
    }
}

/// The browser's part, walked over HTTP without following redirects: the sign-in page's form, then back through the
/// authorization endpoint to the app's redirect URI, whose URL is returned.
struct PageWalker {
    let baseURL: String
    private let session: URLSession

    init(baseURL: String) {
        self.baseURL = baseURL
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpShouldSetCookies = false
        session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }

    /// Walks from `start` until the browser is sent to the app: a URL that is neither http(s) nor a path, or one that
    /// starts with `appPrefix` (an app's claimed https return address).
    func signIn(at start: URL, username: String, password: String, appPrefix: String? = nil) async throws -> URL {
        var cookies: [String: String] = [:]
        var location = start.absoluteString
        for _ in 0..<8 {
            if !location.hasPrefix("http") && !location.hasPrefix("/") { return URL(string: location)! }
            if let appPrefix, location.hasPrefix(appPrefix) { return URL(string: location)! }
            let url = URL(string: location.hasPrefix("/") ? baseURL + location : location)!
            var request = URLRequest(url: url)
            if !cookies.isEmpty { request.setValue(cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "), forHTTPHeaderField: "Cookie") }
            var (data, response) = try await fetch(request, cookies: &cookies)
            if response.statusCode == 200, url.path.hasSuffix("/login") {
                let html = String(decoding: data, as: UTF8.self)
                let csrf = try XCTUnwrap(html.range(of: #"name="csrf" value="([^"]+)""#, options: .regularExpression).map { String(html[$0]) }?
                    .replacingOccurrences(of: "name=\"csrf\" value=\"", with: "").dropLast())
                var post = URLRequest(url: URL(string: baseURL + url.path)!)
                post.httpMethod = "POST"
                post.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
                post.setValue(cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "), forHTTPHeaderField: "Cookie")
                post.httpBody = Data("csrf=\(csrf)&username=\(username)&password=\(password)".utf8)
                (data, response) = try await fetch(post, cookies: &cookies)
            }
            guard response.statusCode == 303, let next = response.value(forHTTPHeaderField: "Location") else {
                XCTFail("the walk stopped at \(url) with \(response.statusCode): \(String(decoding: data, as: UTF8.self).prefix(300))")
                throw CancellationError()
            }
            location = next
        }
        throw CancellationError()
    }

    private func fetch(_ request: URLRequest, cookies: inout [String: String]) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        if let set = http.value(forHTTPHeaderField: "Set-Cookie"), let pair = set.split(separator: ";").first, let equals = pair.firstIndex(of: "=") {
            let (name, value) = (String(pair[..<equals]), String(pair[pair.index(after: equals)...]))
            if value.isEmpty || set.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = value }
        }
        return (data, http)
    }
}

private final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
