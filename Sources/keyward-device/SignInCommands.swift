// keyward-device login, refresh and logout: an app signing a person in with Keyward, on the command line.
import ArgumentParser
import Foundation
import KeywardJOSE
import KeywardKit

/// The options every sign-in command shares: where the device key and the sign-in are kept.
struct SignInStateOptions: ParsableArguments {
    @Option(name: .customLong("state-dir"), help: "Directory holding the device key and the sign-in (mode 0700).")
    var stateDirectory = "keyward-device-state"

    @Option(help: "Device key algorithm when a new key is created (ES256, ES384, ES512, RS256, PS256, EdDSA; env DEVICE_SIGNING_ALG).")
    var alg: String?

    func signer() throws -> DPoPSigner { DPoPSigner(key: try deviceKey(stateDirectory: stateDirectory, alg: alg)) }

    var store: FileSignInStore { FileSignInStore(directory: URL(fileURLWithPath: stateDirectory)) }

    /// The kept sign-in's client, or an error saying to log in first.
    func signedInClient() throws -> (SignInClient, FileSignInStore.Saved) {
        guard let saved = try store.load() else { throw ValidationError("no sign-in in \(stateDirectory): run keyward-device login first") }
        return (SignInClient(configuration: saved.configuration, dpop: try signer(), tokens: saved.tokens), saved)
    }

    /// The installation whose registered key for `appId` the sign-in of `signIn` is bound to.
    func installation(appId: String, signIn: SignInClient.Configuration, platform: DevicePlatform = .ios) -> AppInstallation {
        installationIn(stateDirectory, appId: appId, signIn: signIn, platform: platform)
    }
}

/// The installation the sign-in kept in `directory` is bound to: `nil` when there is no sign-in, or it was made
/// without `--app-id`, or on another app's key than `appId` (when given).
func signedInInstallation(in directory: String, appId expected: String? = nil) throws -> AppInstallation? {
    guard let saved = try FileSignInStore(directory: URL(fileURLWithPath: directory)).load(), let appId = saved.appId else { return nil }
    if let expected, expected != appId { return nil }
    return installationIn(directory, appId: appId, signIn: saved.configuration)
}

/// The installation kept in `directory` for `appId`. The platform matters only to a first registration, which the
/// commands that pass the default do not make.
func installationIn(_ directory: String, appId: String, signIn: SignInClient.Configuration, platform: DevicePlatform = .ios) -> AppInstallation {
    let url = URL(fileURLWithPath: directory)
    return AppInstallation(
        configuration: AppInstallation.Configuration(appId: appId, platform: platform, signIn: signIn), keyStore: FileKeyStore(directory: url),
        store: FileInstallationStore(directory: url)
    )
}

struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign a person in as an app would: print the authorization URL, read the URL the browser was sent back to from stdin, print the id_token's claims.",
        discussion: """
            The code and the tokens are bound to the device key (dpop_jkt, DPoP). Open the printed URL in a browser, sign \
            in, and paste the address the browser ends at (the redirect URI with code, state and iss) on stdin. The tokens \
            are kept in the state directory for `refresh` and `logout`. With --app-id the key is the one `register` \
            registered for that app, so the tokens name the registered device (device_id) and `push enable` can follow.
            """
    )
    @OptionGroup var state: SignInStateOptions

    @Option(help: "Realm issuer URL, e.g. http://127.0.0.1:8080/realms/demo.")
    var issuer: String

    @Option(name: .customLong("client-id"), help: "The app's public client id.")
    var clientId: String

    @Option(name: .customLong("redirect-uri"), help: "One of the client's registered redirect URIs, exactly.")
    var redirectURI: String

    @Option(help: "Space-separated scopes; openid is needed for an id_token.")
    var scope = "openid"

    @Option(name: .customLong("post-logout-redirect-uri"), help: "Where `logout` asks the realm to send the browser back, if the client registered it.")
    var postLogoutRedirectURI: String?

    @Option(help: "prompt: login (sign in again) or none (no page).")
    var prompt: String?

    @Option(name: .customLong("acr-values"), help: "e.g. urn:keyward:acr:mfa to ask for a second factor.")
    var acrValues: String?

    @Flag(help: "Push the request first (RFC 9126).")
    var par = false

    @Option(name: .customLong("app-id"), help: "Sign in with the key registered for this app (keyward-device register), so the tokens name the registered device.")
    var appId: String?

    func run() async throws {
        let configuration = SignInClient.Configuration(
            issuer: issuer, clientId: clientId, redirectURI: redirectURI, scopes: scope.split(separator: " ").map(String.init),
            postLogoutRedirectURI: postLogoutRedirectURI, pushRequests: par
        )
        let options = SignInOptions(prompt: prompt, acrValues: acrValues.map { $0.split(separator: " ").map(String.init) } ?? [])
        if let appId {
            let installation = state.installation(appId: appId, signIn: configuration)
            let request = try await installation.startSignIn(options)
            let tokens = try await installation.finishSignIn(request, redirect: try Self.redirect(for: request))
            try Self.printClaims(tokens, jkt: try await installation.registration().key.publicJWK.thumbprint())
            return
        }
        let client = SignInClient(configuration: configuration, dpop: try state.signer())
        let request = try await client.startSignIn(options)
        let tokens = try await client.finishSignIn(request, redirect: try Self.redirect(for: request))
        try state.store.save(FileSignInStore.Saved(configuration: configuration, tokens: tokens))
        try Self.printClaims(tokens, jkt: client.dpop.thumbprint)
    }

    /// Prints the URL to open and reads the address the browser ended at from stdin.
    private static func redirect(for request: SignInRequest) throws -> URL {
        FileHandle.standardError.write(Data("Open this URL in a browser, sign in, then paste the address the browser ends at:\n".utf8))
        // Written at once (print is buffered when stdout is a pipe): whoever reads the URL answers on stdin.
        FileHandle.standardOutput.write(Data((request.url.absoluteString + "\n").utf8))
        guard let line = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces), let redirect = URL(string: line) else {
            throw ValidationError("no redirect URL on stdin")
        }
        return redirect
    }

    private static func printClaims(_ tokens: SignInTokens, jkt: String) throws {
        var claims: JSONObject = ["sub": .string(tokens.subject), "amr": .array(tokens.amr.map { .string($0) })]
        if let acr = tokens.acr { claims["acr"] = .string(acr) }
        if let authTime = tokens.authTime { claims["auth_time"] = .number(authTime.timeIntervalSince1970) }
        claims["jkt"] = .string(jkt)
        if let device = try? UnverifiedJWT(tokens.accessToken).claims["device_id"] { claims["device_id"] = device }
        print(String(decoding: StrictJSON.serialize(.object(claims)), as: UTF8.self))
    }
}

struct Refresh: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Refresh the kept sign-in with the device key and print the new access token's expiry.")
    @OptionGroup var state: SignInStateOptions

    func run() async throws {
        let tokens: SignInTokens
        if let installation = try signedInInstallation(in: state.stateDirectory) {
            tokens = try await installation.refresh()
        } else {
            let (client, saved) = try state.signedInClient()
            tokens = try await client.refresh()
            try state.store.save(FileSignInStore.Saved(configuration: saved.configuration, tokens: tokens))
        }
        print("refreshed; access token expires at \(ISO8601DateFormatter().string(from: tokens.accessTokenExpiresAt))")
    }
}

struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign the app out: revoke the kept sign-in at the realm, forget it, and print the realm's logout URL for the browser."
    )
    @OptionGroup var state: SignInStateOptions

    func run() async throws {
        let endSession: URL?
        if let installation = try signedInInstallation(in: state.stateDirectory) {
            endSession = try await installation.signOut()
        } else {
            let (client, _) = try state.signedInClient()
            endSession = try await client.signOut()
            try state.store.remove()
        }
        print("signed out")
        if let endSession { print(endSession.absoluteString) }
    }
}
