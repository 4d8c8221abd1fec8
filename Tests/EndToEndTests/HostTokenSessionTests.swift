// Tests: HostTokenSession against a live Keyward: host tokens exchanged for DPoP-bound tokens, retries, refusals.
import Foundation
import KeywardJOSE
import KeywardKit
import KeywardServer
import KeywardWire
import Synchronization
import XCTest

/// HostTokenSession against a live Keyward (issue 15): the host app's own provider signs RS256 tokens, Keyward
/// reads its keys from a JWKS served on loopback, and the session exchanges the tokens (RFC 7523) for DPoP-bound
/// access tokens and calls the DPoP-protected whoami with them.
final class HostTokenSessionTests: XCTestCase {
    static let subject = "emp-1001"
    static let tokenRoute = "/realms/{realm}/protocol/openid-connect/token"
    static let whoamiRoute = "/realms/{realm}/v1/whoami"

    /// What every test starts from: a live server on `clock`, the provider onboarded, the enrolled user's id.
    struct HostApp {
        let runtime: KeywardRuntime
        let baseURL: String
        let provider: HostAuthProvider
        let userId: String
        var issuer: String { baseURL + "/realms/demo" }
        var whoami: String { issuer + "/v1/whoami" }

        /// Requests the server counted for `route`, with `status` or any.
        func requests(_ route: String, status: Int? = nil) -> Int {
            let text = runtime.metrics.render()
            return text.split(separator: "\n").filter { line in
                line.hasPrefix("keyward_http_requests_total{") && line.contains("route=\"\(route)\"")
                    && (status.map { line.contains("status=\"\($0)\"") } ?? true)
            }.reduce(0) { $0 + Int(Double($1.split(separator: " ").last ?? "") ?? 0) }
        }

        /// Host tokens the jwt-bearer grant looked at, whatever its verdict.
        var hostTokenChecks: Int {
            runtime.metrics.render().split(separator: "\n").filter { $0.hasPrefix("keyward_host_token_checks_total{") }
                .reduce(0) { $0 + Int(Double($1.split(separator: " ").last ?? "") ?? 0) }
        }
    }

    func withHostApp(clock: ManualClock, configure: (inout KeywardConfiguration) -> Void = { _ in }, _ body: (HostApp) async throws -> Void) async throws {
        try await LiveServer.run(clock: clock, configure: configure) { baseURL, runtime in
            try await HostAuthProvider.run(audience: baseURL + "/realms/demo", clock: clock.read) { provider in
                let userId = try await provider.onboard(runtime, subject: Self.subject)
                try await body(HostApp(runtime: runtime, baseURL: baseURL, provider: provider, userId: userId))
            }
        }
    }

    func testExchangedTokenCallsWhoAmIAsTheEnrolledUser() async throws {
        let clock = ManualClock()
        try await withHostApp(clock: clock) { app in
            let signer = ProviderSigner(app.provider, subject: Self.subject)
            let dpop = DPoPSigner(key: try SigningKey.generate(.es256), clock: clock.read)
            let session = HostTokenSession(issuer: app.issuer, clientId: "host-app", signer: signer, dpop: dpop, clock: clock.read)

            for _ in 0..<2 {
                let (data, response) = try await session.send("GET", app.whoami)
                XCTAssertEqual(response.statusCode, 200, String(decoding: data, as: UTF8.self))
                let whoami = try JSONDecoder().decode(WhoAmIResponse.self, from: data)
                XCTAssertEqual(whoami.sub, app.userId)
                XCTAssertEqual(whoami.cnf?.jkt, dpop.thumbprint)
                XCTAssertEqual(whoami.iss, app.issuer)
            }
            XCTAssertEqual(signer.callCount, 1, "the second call reuses the kept token")
            XCTAssertEqual(app.requests(Self.tokenRoute), 1)
        }
    }

    func testTokenNearExpiryIsReplacedThroughTheSigner() async throws {
        let clock = ManualClock()
        try await withHostApp(clock: clock) { app in
            let signer = ProviderSigner(app.provider, subject: Self.subject)
            let dpop = DPoPSigner(key: try SigningKey.generate(.es256), clock: clock.read)
            let session = HostTokenSession(
                issuer: app.issuer, clientId: "host-app", signer: signer, dpop: dpop,
                options: .init(refreshMargin: 100), clock: clock.read
            )
            let realm = try await app.runtime.oauth.realms.realm(named: "demo")
            let lifetime = try XCTUnwrap(realm).accessTokenLifetime
            let first = try await session.accessToken()

            clock.advance(by: TimeInterval(lifetime) - 100 - 1)
            let stillFirst = try await session.accessToken()
            XCTAssertEqual(stillFirst, first, "more than the margin left: kept")
            XCTAssertEqual(signer.callCount, 1)

            clock.advance(by: 2)
            let second = try await session.accessToken()
            XCTAssertNotEqual(second, first, "within the margin: replaced")
            XCTAssertEqual(signer.callCount, 2, "the signer was asked for a new host token")

            let (data, response) = try await session.send("GET", app.whoami)
            XCTAssertEqual(response.statusCode, 200, String(decoding: data, as: UTF8.self))
            XCTAssertEqual(signer.callCount, 2)
        }
    }

    /// The server's clock runs an hour ahead of the device's, so the token the session keeps is expired for the
    /// resource while the session, reading the device's clock, still takes it for fresh: the 401 is the only sign.
    func testA401GetsAFreshTokenAndOneRetry() async throws {
        let serverClock = ManualClock()
        let deviceClock = ManualClock(serverClock.now())
        try await withHostApp(clock: serverClock) { app in
            let signer = ProviderSigner(app.provider, subject: Self.subject)
            // Proofs carry the server's time: only the session's idea of the token's expiry lags.
            let dpop = DPoPSigner(key: try SigningKey.generate(.es256), clock: serverClock.read)
            let session = HostTokenSession(issuer: app.issuer, clientId: "host-app", signer: signer, dpop: dpop, clock: deviceClock.read)
            _ = try await session.accessToken()
            serverClock.advance(by: 3600)

            let (data, response) = try await session.send("GET", app.whoami)
            XCTAssertEqual(response.statusCode, 200, String(decoding: data, as: UTF8.self))
            XCTAssertEqual(try JSONDecoder().decode(WhoAmIResponse.self, from: data).sub, app.userId)
            XCTAssertEqual(signer.callCount, 2, "one new host token for the retry")
            XCTAssertEqual(app.requests(Self.whoamiRoute, status: 401), 1)
            XCTAssertEqual(app.requests(Self.whoamiRoute, status: 200), 1)
        }
    }

    /// A resource that refuses every token (whoami of another realm) gets the request twice, not more, and the
    /// caller sees its 401.
    func testASecond401IsReturnedNotRetried() async throws {
        let clock = ManualClock()
        try await withHostApp(clock: clock) { app in
            _ = try await app.runtime.oauth.realms.createRealm(name: "other")
            let signer = ProviderSigner(app.provider, subject: Self.subject)
            let dpop = DPoPSigner(key: try SigningKey.generate(.es256), clock: clock.read)
            let session = HostTokenSession(issuer: app.issuer, clientId: "host-app", signer: signer, dpop: dpop, clock: clock.read)

            let (_, response) = try await session.send("GET", app.baseURL + "/realms/other/v1/whoami")
            XCTAssertEqual(response.statusCode, 401)
            XCTAssertEqual(signer.callCount, 2)
            XCTAssertEqual(app.requests(Self.whoamiRoute, status: 401), 2)
        }
    }

    func testConcurrentCallersShareOneExchange() async throws {
        let clock = ManualClock()
        try await withHostApp(clock: clock) { app in
            let signer = AsyncProviderSigner(app.provider, subject: Self.subject)
            let dpop = DPoPSigner(key: try SigningKey.generate(.es256), clock: clock.read)
            let session = HostTokenSession(issuer: app.issuer, clientId: "host-app", signer: signer, dpop: dpop, clock: clock.read)

            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<8 { group.addTask { try await session.accessToken() } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            XCTAssertEqual(tokens.count, 8)
            XCTAssertEqual(Set(tokens).count, 1)
            XCTAssertEqual(signer.callCount, 1)
            XCTAssertEqual(app.requests(Self.tokenRoute), 1)
        }
    }

    /// A signer that keeps handing out the same token: Keyward spent its jti on the first exchange and refuses
    /// the second, and the session says so with Keyward's reason.
    func testReplayedHostTokenIsRefusedWithItsReason() async throws {
        let clock = ManualClock()
        try await withHostApp(clock: clock) { app in
            let signer = ProviderSigner(app.provider, subject: Self.subject, reuseFirst: true)
            let dpop = DPoPSigner(key: try SigningKey.generate(.es256), clock: clock.read)
            let session = HostTokenSession(issuer: app.issuer, clientId: "host-app", signer: signer, dpop: dpop, clock: clock.read)
            _ = try await session.accessToken()
            await session.invalidate()
            do {
                _ = try await session.accessToken()
                XCTFail("a replayed host token was exchanged")
            } catch let error as KeywardKitError {
                guard case .exchangeRefused(let status, let code, let reason, let description) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(status, 400)
                XCTAssertEqual(code, "invalid_grant")
                XCTAssertEqual(reason, "jti_replayed")
                XCTAssertTrue(description?.contains("was used before") ?? false, description ?? "no description")
                XCTAssertTrue(error.description.contains("jti_replayed"), error.description)
            }
        }
    }

    func testTokensFailingPreValidationNeverReachTheServer() async throws {
        let clock = ManualClock()
        try await withHostApp(clock: clock) { app in
            let provider = app.provider
            let cases: [(String, HostTokenProblem)] = [
                (try provider.mint(subject: Self.subject, dropping: ["sub"]), .missingClaim("sub")),
                (try provider.mint(subject: Self.subject, dropping: ["iss"]), .missingClaim("iss")),
                (try provider.mint(subject: Self.subject, dropping: ["exp"]), .missingClaim("exp")),
                (String(try provider.mint(subject: Self.subject).split(separator: ".").prefix(2).joined(separator: ".")), .notThreeParts(found: 2)),
            ]
            for (token, problem) in cases {
                let session = HostTokenSession(
                    issuer: app.issuer, clientId: "host-app", signer: FixedSigner(token),
                    dpop: DPoPSigner(key: try SigningKey.generate(.es256), clock: clock.read), clock: clock.read
                )
                do {
                    _ = try await session.send("GET", app.whoami)
                    XCTFail("sent \(problem)")
                } catch let error as KeywardKitError {
                    XCTAssertEqual(error, .invalidHostToken(problem))
                }
            }
            // Expired by the device's clock beyond the leeway.
            let expired = try provider.mint(subject: Self.subject, lifetime: 60)
            clock.advance(by: 60 + HostToken.defaultLeeway)
            let session = HostTokenSession(
                issuer: app.issuer, clientId: "host-app", signer: FixedSigner(expired),
                dpop: DPoPSigner(key: try SigningKey.generate(.es256), clock: clock.read), clock: clock.read
            )
            do {
                _ = try await session.accessToken()
                XCTFail("sent an expired token")
            } catch let error as KeywardKitError {
                guard case .invalidHostToken(.expired) = error else { return XCTFail("\(error)") }
            }
            XCTAssertEqual(app.requests(Self.tokenRoute), 0, "no token request reached the server")
            XCTAssertEqual(app.requests(Self.whoamiRoute), 0)
            XCTAssertEqual(app.hostTokenChecks, 0)
        }
    }

    /// With `dpop.requireNonce` the first exchange is answered `use_dpop_nonce`; the same host token goes again
    /// with the nonce, and Keyward spends its jti only then (the proof is checked first).
    func testNonceDemandIsAnsweredWithTheSameHostToken() async throws {
        let clock = ManualClock()
        try await withHostApp(clock: clock, configure: { $0.dpopRequireNonce = true }) { app in
            let signer = ProviderSigner(app.provider, subject: Self.subject)
            let dpop = DPoPSigner(key: try SigningKey.generate(.es256), clock: clock.read)
            let session = HostTokenSession(issuer: app.issuer, clientId: "host-app", signer: signer, dpop: dpop, clock: clock.read)
            let (data, response) = try await session.send("GET", app.whoami)
            XCTAssertEqual(response.statusCode, 200, String(decoding: data, as: UTF8.self))
            XCTAssertEqual(signer.callCount, 1)
            XCTAssertEqual(app.requests(Self.tokenRoute, status: 400), 1)
            XCTAssertEqual(app.requests(Self.tokenRoute, status: 200), 1)
        }
    }
}

/// A signer for new code (``AsyncTokenSigner``) minting from the provider, counting its calls.
final class AsyncProviderSigner: AsyncTokenSigner {
    private let provider: HostAuthProvider
    private let subject: String
    private let calls = Mutex(0)

    init(_ provider: HostAuthProvider, subject: String) {
        self.provider = provider
        self.subject = subject
    }

    var callCount: Int { calls.withLock { $0 } }

    func signedToken() async throws -> String {
        calls.withLock { $0 += 1 }
        return try provider.mint(subject: subject)
    }
}

/// Hands out the one token it was given.
struct FixedSigner: AsyncTokenSigner {
    let token: String
    init(_ token: String) { self.token = token }
    func signedToken() async throws -> String { token }
}
