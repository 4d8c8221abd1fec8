// A sign-in kept in a file only its owner can read, for apps and tools without a Keychain (Linux, keyward-device).
import Foundation
import KeywardWire

/// Keeps one app's sign-in — its registration and its tokens — in `signin.json` in a directory, mode 0600, written
/// atomically. On Apple platforms keep ``SignInTokens`` in the Keychain instead.
public struct FileSignInStore: Sendable {
    /// What is kept: enough to build the ``SignInClient`` again, and its tokens.
    public struct Saved: Sendable, Codable, Equatable {
        public var issuer: String
        public var clientId: String
        public var redirectURI: String
        public var scopes: [String]
        public var postLogoutRedirectURI: String?
        public var tokens: SignInTokens
        /// The device app whose registered key the tokens are bound to (``AppInstallation``); nil for a sign-in on
        /// keyward-device's own `device` key.
        public var appId: String?

        public init(configuration: SignInClient.Configuration, tokens: SignInTokens, appId: String? = nil) {
            (issuer, clientId, redirectURI, scopes, postLogoutRedirectURI) = (
                configuration.issuer, configuration.clientId, configuration.redirectURI, configuration.scopes, configuration.postLogoutRedirectURI
            )
            self.tokens = tokens
            self.appId = appId
        }

        public var configuration: SignInClient.Configuration {
            SignInClient.Configuration(issuer: issuer, clientId: clientId, redirectURI: redirectURI, scopes: scopes, postLogoutRedirectURI: postLogoutRedirectURI)
        }
    }

    public let directory: URL
    var file: URL { directory.appendingPathComponent("signin.json") }

    public init(directory: URL) { self.directory = directory }

    public func save(_ saved: Saved) throws {
        try PrivateFile.createDirectory(directory)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        try PrivateFile.write(try encoder.encode(saved), to: file)
    }

    /// The kept sign-in, or nil when there is none; a file that does not hold one is an error naming it.
    public func load() throws -> Saved? {
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        do {
            return try decoder.decode(Saved.self, from: try Data(contentsOf: file))
        } catch {
            throw KeywardKitError.corruptStateFile(file.path)
        }
    }

    public func remove() throws {
        guard FileManager.default.fileExists(atPath: file.path) else { return }
        try FileManager.default.removeItem(at: file)
    }
}
