// Test support: a host app's auth provider serving a JWKS on loopback and minting host tokens; a manual clock.
import Foundation
import Hummingbird
import KeywardJOSE
import KeywardKit
import KeywardServer
import Logging
import ServiceLifecycle
import Synchronization

/// A clock the test moves by hand (docs/ARCHITECTURE.md §4: tests move time, they do not sleep).
final class ManualClock: KeywardClock {
    private let current: Mutex<Date>

    init(_ start: Date = Date()) { current = Mutex(start) }

    func now() -> Date { current.withLock { $0 } }

    func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }

    /// The clock as KeywardKit takes it.
    var read: @Sendable () -> Date { { [self] in now() } }
}

/// The host app's own auth provider: an RS256 key (RSA-2048) whose public half a small Hummingbird app serves as
/// a JWK Set on loopback, minting host tokens for the realm as the customer's backend would.
struct HostAuthProvider: Sendable {
    static let issuer = "https://auth.host-app.example"

    let key: SigningKey
    let kid: String
    let jwksURL: String
    /// The realm's issuer URL, the audience a Keyward issuer expects by default.
    let audience: String
    let clock: @Sendable () -> Date

    /// A host token for `subject`: `typ` JWT, `kid`, `iss`, `sub`, `aud`, `iat`, `exp` and a new `jti`.
    /// `dropping` leaves claims out, `replacing` sets others.
    func mint(subject: String, lifetime: TimeInterval = 300, dropping: Set<String> = [], replacing: JSONObject = [:]) throws -> String {
        let now = clock().timeIntervalSince1970.rounded(.down)
        var claims: JSONObject = [
            "iss": .string(Self.issuer), "sub": .string(subject), "aud": .string(audience),
            "iat": .number(now), "exp": .number(now + lifetime), "jti": .string(UUID().uuidString),
        ]
        for name in dropping { claims[name] = nil }
        claims.merge(replacing) { $1 }
        return try JWS.sign(header: ["kid": .string(kid), "typ": "JWT"], claims: claims, key: key)
    }

    /// Registers what a customer's onboarding registers: the public client `clientId`, this provider as an issuer
    /// of `realm` (keys from its JWKS URL), and `subject` as an enrolled user. Returns the user's Keyward id.
    func onboard(_ runtime: KeywardRuntime, realm: String = "demo", clientId: String = "host-app", subject: String) async throws -> String {
        _ = try await runtime.oauth.clients.createPublicClient(realm: realm, clientId: clientId)
        _ = try await runtime.hostTokens.issuers.add(.init(realm: realm, issuer: Self.issuer, jwksURL: jwksURL))
        let results = try await runtime.hostTokens.issuers.enroll(realm: realm, issuer: Self.issuer, subjects: [subject])
        guard case .enrolled(let user) = results.first else { throw ProviderError("enrolling \(subject): \(results)") }
        return user.id
    }

    /// Runs `body` with a provider whose JWKS is served on a loopback port, and stops the server afterwards.
    static func run(audience: String, clock: @escaping @Sendable () -> Date, _ body: (HostAuthProvider) async throws -> Void) async throws {
        let key = try SigningKey.generate(.rs256)
        var jwk = key.publicJWK
        let kid = jwk.thumbprint()
        jwk.kid = kid
        let document = String(decoding: StrictJSON.serialize(["keys": .array([.object(jwk.jsonObject)])]), as: UTF8.self)
        let router = Router()
        router.get("/jwks.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/jwk-set+json", .cacheControl: "max-age=300"],
                body: .init(byteBuffer: ByteBuffer(string: document))
            )
        }
        let port = try LiveServer.freePort()
        var logger = Logger(label: "host-auth-provider")
        logger.logLevel = .warning
        let ready = AsyncStream<Void>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { _ in ready.continuation.yield() }, logger: logger
        )
        let serviceGroup = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let provider = HostAuthProvider(key: key, kid: kid, jwksURL: "http://127.0.0.1:\(port)/jwks.json", audience: audience, clock: clock)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await serviceGroup.run() }
            for await _ in ready.stream { break }
            do {
                try await body(provider)
            } catch {
                await serviceGroup.triggerGracefulShutdown()
                throw error
            }
            await serviceGroup.triggerGracefulShutdown()
            try await group.waitForAll()
        }
    }
}

struct ProviderError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A host app's existing callback signer, as the source SDK's apps write it: each call asks the provider for a new
/// token. It counts the calls so a test sees when KeywardKit asked for a host token.
final class ProviderSigner: TokenSigner, Sendable {
    private let provider: HostAuthProvider
    private let subject: String
    private let calls = Mutex(0)
    /// When set, the first token minted is handed out on every call (a signer that caches its token).
    private let reuseFirst: Bool
    private let first = Mutex<String?>(nil)

    init(_ provider: HostAuthProvider, subject: String, reuseFirst: Bool = false) {
        self.provider = provider
        self.subject = subject
        self.reuseFirst = reuseFirst
    }

    var callCount: Int { calls.withLock { $0 } }

    func sign(_ unsignedToken: String, resultHandler: @escaping ResultHandler<String>) {
        calls.withLock { $0 += 1 }
        do {
            let minted = try provider.mint(subject: subject)
            let token = !reuseFirst ? minted : first.withLock { stored in
                let token = stored ?? minted
                stored = token
                return token
            }
            resultHandler(.success(token))
        } catch {
            resultHandler(.failure(error))
        }
    }
}
