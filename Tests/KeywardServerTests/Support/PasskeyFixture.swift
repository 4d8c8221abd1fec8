// Test support: passkeys turned on for the demo realm, and a forged authenticator answering the endpoints' options.
import AttestationTestSupport
import Foundation
import HTTPTypes
import KeywardJOSE
@testable import KeywardServer
import KeywardWire
import XCTest

enum PasskeyFixture {
    static let base = "/realms/demo/webauthn"

    static func enable(_ server: TestServer, _ change: (inout PasskeySettings) -> Void = { _ in }) async throws {
        var settings = PasskeySettings()
        settings.mode = .optional
        change(&settings)
        try await server.runtime.passkeys.settings.save(settings, realm: "demo")
    }

    /// An authenticator for the test server's RP ID and origin.
    static func authenticator(algorithm: Int = -7) throws -> ForgedPasskey {
        var passkey = try ForgedPasskey(algorithm: algorithm)
        passkey.rpID = "keyward.test"
        passkey.origin = "http://keyward.test"
        return passkey
    }

    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ page: TestBrowser.Page) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(page.html.utf8))
    }

    /// The CSRF token the browser's session or sign-in page carries.
    static func csrf(_ browser: TestBrowser, fromLogin: Bool = false) async throws -> String {
        if fromLogin {
            let login = try await browser.get("/realms/demo/login")
            return try XCTUnwrap(login.field("csrf"))
        }
        let session = try await browser.get("/realms/demo/v1/auth/session")
        return try XCTUnwrap(try StrictJSON.parseObject(Array(session.html.utf8))["csrf_token"]?.stringValue, session.html)
    }

    static func headers(_ csrf: String) -> HTTPFields { [HTTPField.Name("X-CSRF-Token")!: csrf] }

    /// Signs in with the password, asks for registration options, and answers them with `passkey`.
    static func register(_ browser: TestBrowser, _ passkey: ForgedPasskey, name: String? = nil, signIn: Bool = true) async throws -> TestBrowser.Page {
        if signIn { _ = try await browser.signIn() }
        let csrf = try await csrf(browser)
        let optionsPage = try await browser.postJSON(base + "/registration/options", "{}", headers: headers(csrf))
        XCTAssertEqual(optionsPage.status, .ok, optionsPage.html)
        let options = try decode(PublicKeyCredentialCreationOptionsJSON.self, optionsPage)
        var authenticator = passkey
        authenticator.credentialID = passkey.credentialID
        let (clientData, object) = try authenticator.registration(challenge: try Base64URL.decode(options.challenge))
        var body = try StrictJSON.parseObject(Array(try json(RegistrationResponseJSON(
            id: Base64URL.encode(passkey.credentialID),
            response: .init(clientDataJSON: Base64URL.encode(clientData), attestationObject: Base64URL.encode(object), transports: ["internal"])
        )).utf8))
        if let name { body["name"] = .string(name) }
        return try await browser.postJSON(base + "/registration", String(decoding: StrictJSON.serialize(body), as: UTF8.self), headers: headers(csrf))
    }

    /// Asks for sign-in options (the browser must hold the sign-in page's state or a session) and answers them with
    /// `passkey`, after `mutate` had its say on the response.
    static func signIn(
        _ browser: TestBrowser, _ passkey: ForgedPasskey, csrf: String, username: String? = nil, userHandle: String?,
        mutate: (inout AuthenticationResponseJSON) -> Void = { _ in }
    ) async throws -> TestBrowser.Page {
        let asked = username.map { #"{"username":"\#($0)"}"# } ?? "{}"
        let optionsPage = try await browser.postJSON(base + "/authentication/options", asked, headers: headers(csrf))
        XCTAssertEqual(optionsPage.status, .ok, optionsPage.html)
        let options = try decode(PublicKeyCredentialRequestOptionsJSON.self, optionsPage)
        return try await answer(browser, passkey, challenge: options.challenge, csrf: csrf, userHandle: userHandle, mutate: mutate)
    }

    static func answer(
        _ browser: TestBrowser, _ passkey: ForgedPasskey, challenge: String, csrf: String, userHandle: String?,
        mutate: (inout AuthenticationResponseJSON) -> Void = { _ in }
    ) async throws -> TestBrowser.Page {
        let (clientData, authData, signature) = try passkey.assertion(challenge: try Base64URL.decode(challenge))
        var response = AuthenticationResponseJSON(
            id: Base64URL.encode(passkey.credentialID),
            response: .init(
                clientDataJSON: Base64URL.encode(clientData), authenticatorData: Base64URL.encode(authData), signature: Base64URL.encode(signature),
                userHandle: userHandle
            )
        )
        mutate(&response)
        return try await browser.postJSON(base + "/authentication", try json(response), headers: headers(csrf))
    }

    /// The user handle Keyward gives `username` of the demo realm.
    static func handle(_ server: TestServer, _ username: String = "test") async throws -> String {
        let user = try await server.runtime.accounts.users.user(realm: "demo", username: username)
        return Base64URL.encode(Array(try XCTUnwrap(user).id.utf8))
    }

    /// The `reason` of a `passkey_refused` answer.
    static func reason(_ page: TestBrowser.Page) -> String? {
        (try? StrictJSON.parseObject(Array(page.html.utf8)))?["reason"]?.stringValue
    }

    static func error(_ page: TestBrowser.Page) -> String? {
        (try? StrictJSON.parseObject(Array(page.html.utf8)))?["error"]?.stringValue
    }
}
