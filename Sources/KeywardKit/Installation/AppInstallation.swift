// One app installation on one key: registered (and attested) with the realm's Devices API, signing its person in
// with that key, approving logins with it, rotating it once for all of them.
import Foundation
import KeywardJOSE
import KeywardWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One installation of an app, bound to one key in a ``KeyStore`` — the key ``DeviceRegistrar`` registers (with the
/// platform's attestation) — and everything built on it:
///
/// - ``register(deviceId:)``: the device key registered with the realm's app (`POST /v1/device/register`);
/// - ``startSignIn(_:)`` / ``finishSignIn(_:redirect:)``: the person signed in through the realm's pages with the
///   device key as `dpop_jkt`, so the tokens are bound to it and name the registered device (`device_id`);
/// - ``enablePush(_:)``: push approvals on the same key, without a QR code (`POST /v1/device/push-mfa`), and
///   ``pushApprovals()``: the ``PushMFAClient`` that lists and answers login challenges with it;
/// - ``rotateKey()``: a new device key, which carries the push approvals and the sign-in with it.
///
/// Removing the device on the server (the account page, `keyward devices remove`, `keyward users disable`) ends all of
/// it at once. What the installation keeps besides the key — registration, sign-in, push state — is in its
/// ``InstallationStore``.
public actor AppInstallation {
    /// The app, as the realm knows it twice: a device app (`keyward apps add`) and a public client (`keyward clients create`).
    public struct Configuration: Sendable {
        /// The device app's id.
        public var appId: String
        /// The platform the device app was added with.
        public var platform: DevicePlatform
        /// The public client the person signs in through; its issuer is the realm's.
        public var signIn: SignInClient.Configuration

        public init(appId: String, platform: DevicePlatform, signIn: SignInClient.Configuration) {
            (self.appId, self.platform, self.signIn) = (appId, platform, signIn)
        }

        /// The realm's issuer URL, `https://HOST/realms/NAME`.
        public var issuer: String { signIn.issuer }
    }

    /// Where the login challenges go and how the account page names the device.
    public struct PushOptions: Sendable {
        /// The push sender the server should use: `fcm`, `apns`, `log` or `none` (the app polls).
        public var providerType: String
        /// The FCM registration token or APNs device token; required unless the type is `none`.
        public var providerId: String?
        /// The name the account page and the waiting page show; by default the server's ("iPhone", "Android phone").
        public var deviceLabel: String?

        public init(providerType: String = "none", providerId: String? = nil, deviceLabel: String? = nil) {
            (self.providerType, self.providerId, self.deviceLabel) = (providerType, providerId, deviceLabel)
        }
    }

    public nonisolated let configuration: Configuration
    /// The registrar of the installation's key; signed device requests go through it (``DeviceRegistrar/send(appId:method:path:body:contentType:)``).
    public nonisolated let registrar: DeviceRegistrar
    private let keyStore: any KeyStore
    private let store: any InstallationStore
    private let session: URLSession
    private let clock: @Sendable () -> Date
    /// The sign-in client of the current device key, by the key's thumbprint: a rotated key gets a new one.
    private var signInClient: (thumbprint: String, client: SignInClient)?
    /// The tokens last written to the store, so that only a change is written.
    private var keptTokens: SignInTokens?

    /// An installation of `configuration`'s app whose key lives in `keyStore` (``FileKeyStore`` on Linux,
    /// `KeychainKeyStore` on Apple platforms, where the key is in the Secure Enclave) and whose other state lives in
    /// `store`. `attester` gives the platform's attestation of the key at registration (`AppAttestAttester` on iOS).
    public init(
        configuration: Configuration, keyStore: any KeyStore, store: any InstallationStore, attester: any Attester = NoAttestation(),
        registrarOptions: DeviceRegistrar.Options = DeviceRegistrar.Options(), session: URLSession = .shared,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.configuration = configuration
        self.registrar = DeviceRegistrar(
            issuer: configuration.issuer, platform: configuration.platform, keyStore: keyStore, stateStore: store, attester: attester,
            options: registrarOptions, session: session, clock: clock
        )
        self.keyStore = keyStore
        self.store = store
        self.session = session
        self.clock = clock
    }

    // MARK: - The key

    /// Registers the device key with the app (attested by the `attester`), or returns the registration it has.
    @discardableResult
    public func register(deviceId: String? = nil) async throws -> DeviceRegistrar.RegistrationResult {
        try await registrar.registerDevice(appId: configuration.appId, deviceId: deviceId)
    }

    /// The registration and its key; ``KeywardKitError/notRegistered(appId:)`` before ``register(deviceId:)``.
    public func registration() async throws -> (state: DeviceRegistrationState, key: any JWSSigner) {
        guard let state = try await registrar.state(appId: configuration.appId), state.phase == .registered else {
            throw KeywardKitError.notRegistered(appId: configuration.appId)
        }
        guard let key = try keyStore.key(named: state.keyName) else { throw KeywardKitError.noSuchKey(state.keyName) }
        return (state, key)
    }

    /// Replaces the device key (``DeviceRegistrar/rotateKey(appId:)``). The server moves the push approvals to the new
    /// key; the sign-in's tokens, bound to the old one, are refreshed at once with a proof by the new key.
    @discardableResult
    public func rotateKey() async throws -> DeviceRegistrationState {
        let state = try await registrar.rotateKey(appId: configuration.appId)
        if try storedTokens() != nil { try await refresh() }
        return state
    }

    // MARK: - Signing in

    /// Starts the person's sign-in with the device key as `dpop_jkt`: open the request's URL (in
    /// `ASWebAuthenticationSession` on iOS). The device must be registered first, so the tokens name it.
    public func startSignIn(_ options: SignInOptions = SignInOptions()) async throws -> SignInRequest {
        try await currentSignInClient().startSignIn(options)
    }

    /// Finishes the sign-in with the URL the browser was sent back to, and keeps the tokens.
    @discardableResult
    public func finishSignIn(_ request: SignInRequest, redirect: URL) async throws -> SignInTokens {
        try await withSignIn { try await $0.finishSignIn(request, redirect: redirect) }
    }

    /// The signed-in person's access token, bound to the device key; refreshed (and kept) when it is about to expire.
    public func accessToken() async throws -> String {
        try await withSignIn { try await $0.accessToken() }
    }

    /// Refreshes the sign-in with a proof by the device key, and keeps the new tokens.
    @discardableResult
    public func refresh() async throws -> SignInTokens {
        try await withSignIn { try await $0.refresh() }
    }

    /// Sends a request with the person's token and a DPoP proof by the device key (refreshing once on a 401).
    public func send(_ method: String, _ url: String, body: Data? = nil, contentType: String? = nil) async throws -> (Data, HTTPURLResponse) {
        try await withSignIn { try await $0.send(method, url, body: body, contentType: contentType) }
    }

    /// Signs the person out of the app (the refresh token is revoked) and forgets the tokens; returns the realm's
    /// logout URL for the browser. Push approvals stay on, but answering needs the person signed in again.
    @discardableResult
    public func signOut() async throws -> URL? {
        try await withSignIn { try await $0.signOut() }
    }

    // MARK: - Push approvals

    /// Turns push approvals on for this device, on its key, for the signed-in person, and keeps the push state.
    /// The server asks for a sign-in on this device within the last 10 minutes, and for one with the second factor
    /// when the person approves on another device already (`SignInOptions(acrValues: ["urn:keyward:acr:mfa"])`).
    @discardableResult
    public func enablePush(_ options: PushOptions = PushOptions()) async throws -> PushMFAClient {
        let (registration, key) = try await registration()
        var body: JSONObject = ["push_provider_type": .string(options.providerType)]
        if let providerId = options.providerId { body["push_provider_id"] = .string(providerId) }
        if let label = options.deviceLabel { body["device_label"] = .string(label) }
        let (data, response) = try await send("POST", configuration.issuer + "/v1/device/push-mfa", body: Data(StrictJSON.serialize(.object(body))), contentType: "application/json")
        let answer = try? StrictJSON.parseObject(Array(data))
        guard response.statusCode == 201 else {
            throw KeywardKitError.server(
                status: response.statusCode, code: answer?["error"]?.stringValue,
                description: answer?["error_description"]?.stringValue ?? response.value(forHTTPHeaderField: "WWW-Authenticate")
            )
        }
        guard let credentialId = answer?["credential_id"]?.stringValue, let userId = answer?["user_id"]?.stringValue,
            answer?["device_id"]?.stringValue == registration.deviceId
        else { throw KeywardKitError.unexpectedResponse("the push-mfa answer lacks credential_id or user_id, or names another device") }
        let state = DeviceState(
            issuer: configuration.issuer, realm: URL(string: configuration.issuer)?.lastPathComponent ?? "", userId: userId, username: "",
            credentialId: credentialId, deviceId: registration.deviceId, deviceType: configuration.platform.rawValue, deviceLabel: options.deviceLabel ?? "",
            pushProviderId: options.providerId ?? "", pushProviderType: options.providerType, keyAlgorithm: key.algorithm.rawValue,
            registeredAppId: configuration.appId
        )
        try store.savePushState(state)
        return pushClient(state, key: key)
    }

    /// The client that lists and answers login challenges on this device, or nil when push approvals are off here.
    /// Its tokens are the person's sign-in (``accessToken()``), bound to the device key.
    public func pushApprovals() async throws -> PushMFAClient? {
        guard let state = try store.pushState(), state.registeredAppId == configuration.appId else { return nil }
        return pushClient(state, key: try await registration().key)
    }

    private func pushClient(_ state: DeviceState, key: any JWSSigner) -> PushMFAClient {
        PushMFAClient(state: state, key: key, tokenSource: .signIn { [self] in try await self.accessToken() }, session: session, clock: clock)
    }

    // MARK: - State

    private func currentSignInClient() async throws -> SignInClient {
        let key = try await registration().key
        let thumbprint = key.publicJWK.thumbprint()
        if let signInClient, signInClient.thumbprint == thumbprint { return signInClient.client }
        let client = SignInClient(
            configuration: configuration.signIn, dpop: DPoPSigner(key: key, clock: clock), tokens: try storedTokens(), session: session, clock: clock
        )
        signInClient = (thumbprint, client)
        return client
    }

    private func storedTokens() throws -> SignInTokens? {
        if keptTokens == nil { keptTokens = try store.signIn() }
        return keptTokens
    }

    /// Runs `operation` with the current key's sign-in client, then keeps its tokens if they changed — also when it
    /// failed after a refresh had already replaced the refresh token, which must not be lost.
    private func withSignIn<Result: Sendable>(_ operation: (SignInClient) async throws -> Result) async throws -> Result {
        let client = try await currentSignInClient()
        do {
            let result = try await operation(client)
            try await keep(client)
            return result
        } catch {
            try? await keep(client)
            throw error
        }
    }

    /// Writes the client's tokens to the store when they changed (a sign-in, a refresh, a sign-out).
    private func keep(_ client: SignInClient) async throws {
        let tokens = await client.tokens
        guard tokens != keptTokens else { return }
        try store.saveSignIn(tokens, installation: configuration)
        keptTokens = tokens
    }
}
