// Test support: a browser for page tests that keeps the session cookie and reads hidden form fields.
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Synchronization
import XCTest

/// A browser for page tests: keeps its cookies (by name; every path of the test server is under the ones they
/// name), follows nothing by itself, reads hidden fields.
final class TestBrowser: Sendable {
    let client: any TestClientProtocol
    /// Sent as Accept-Language with every request when set.
    let acceptLanguage: String?
    private let jar = Mutex<[(name: String, value: String)]>([])

    init(_ client: any TestClientProtocol, acceptLanguage: String? = nil) {
        self.client = client
        self.acceptLanguage = acceptLanguage
    }

    struct Page: Sendable {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let html: String

        var location: String? { headers[.location] }

        /// The value of `<input … name="NAME" value="…">` (first match).
        func field(_ name: String) -> String? {
            capture(#"name="\#(name)" value="([^"]*)""#)
        }

        func capture(_ pattern: String) -> String? {
            guard let regex = try? NSRegularExpression(pattern: pattern, options: [.dotMatchesLineSeparators]),
                let match = regex.firstMatch(in: html, range: NSRange(html.startIndex..., in: html)),
                let range = Range(match.range(at: 1), in: html)
            else { return nil }
            return String(html[range]).replacingOccurrences(of: "&amp;", with: "&").replacingOccurrences(of: "&#x2F;", with: "/")
        }

        func contains(_ text: String) -> Bool { html.contains(text) }
    }

    /// The session cookie as `name=value`.
    var sessionCookie: String? { cookie(named: "keyward-session") }

    /// The cookie `name` as `name=value`, if the browser holds one.
    func cookie(named name: String) -> String? {
        jar.withLock { $0.first { $0.name == name }.map { "\($0.name)=\($0.value)" } }
    }

    /// Sets a cookie as a response would (a session a test made outside the pages).
    func setCookie(_ name: String, _ value: String) {
        jar.withLock { jar in
            jar.removeAll { $0.name == name }
            jar.append((name, value))
        }
    }

    /// The names of the cookies the browser holds.
    var cookieNames: [String] { jar.withLock { $0.map(\.name) } }

    func get(_ path: String) async throws -> Page {
        try await send(path, method: .get, body: nil)
    }

    func post(_ path: String, _ fields: [String: String]) async throws -> Page {
        let body = fields.map { "\(Self.encode($0.key))=\(Self.encode($0.value))" }.joined(separator: "&")
        return try await send(path, method: .post, body: body)
    }

    /// A request with the browser's cookie and `extra` headers (JSON routes of the browser session).
    func request(_ path: String, method: HTTPRequest.Method, headers extra: HTTPFields) async throws -> Page {
        try await send(path, method: method, body: nil, extra: extra)
    }

    /// A JSON POST with the browser's cookie and `extra` headers (the passkey endpoints).
    func postJSON(_ path: String, _ body: String, headers extra: HTTPFields = [:]) async throws -> Page {
        var headers = extra
        headers[.contentType] = "application/json"
        return try await send(path, method: .post, body: body, extra: headers)
    }

    private func send(_ path: String, method: HTTPRequest.Method, body: String?, extra: HTTPFields = [:]) async throws -> Page {
        var headers = extra
        let cookies = jar.withLock { $0.map { "\($0.name)=\($0.value)" } }
        if !cookies.isEmpty { headers[.cookie] = cookies.joined(separator: "; ") }
        if body != nil, headers[.contentType] == nil { headers[.contentType] = "application/x-www-form-urlencoded" }
        if let acceptLanguage { headers[.acceptLanguage] = acceptLanguage }
        let page = try await client.execute(uri: path, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }) { response in
            Page(status: response.status, headers: response.headers, html: String(buffer: response.body))
        }
        for setCookie in page.headers[values: .setCookie] {
            guard let pair = setCookie.split(separator: ";").first, let equals = pair.firstIndex(of: "=") else { continue }
            let (name, value) = (String(pair[..<equals]), String(pair[pair.index(after: equals)...]))
            let removed = value.isEmpty || setCookie.contains("Max-Age=0")
            jar.withLock { jar in
                jar.removeAll { $0.name == name }
                if !removed { jar.append((name, value)) }
            }
        }
        return page
    }

    /// Signs in as test/test and returns the page the login redirects to.
    func signIn(realm: String = "demo", username: String = "test", password: String = "test", query: String = "") async throws -> Page {
        let login = try await get("/realms/\(realm)/login\(query)")
        XCTAssertEqual(login.status, .ok)
        let answer = try await post("/realms/\(realm)/login", ["csrf": login.field("csrf") ?? "", "username": username, "password": password])
        return answer
    }

    static func encode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}
