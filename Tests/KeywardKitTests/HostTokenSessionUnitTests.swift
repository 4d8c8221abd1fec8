// Tests: HostTokenSession up to the wire: bad host tokens never sent, the exchange's shape, signer misbehaviour.
import Foundation
import KeywardJOSE
import KeywardKit
import Synchronization
import XCTest

/// HostTokenSession up to the wire, against a loopback listener that counts what reaches it: a token failing
/// pre-validation is never sent, the exchange has RFC 7523's shape, and whatever a signer does with its handler
/// (answers twice, never, fails, hangs) the caller gets one answer. The live-server side is in EndToEndTests.
final class HostTokenSessionUnitTests: XCTestCase {
    static let key = try! SigningKey.generate(.rs256)
    let now = Date(timeIntervalSince1970: 1_900_000_000)
    var server: LoopbackHTTPServer!

    override func setUp() async throws {
        server = try LoopbackHTTPServer { _ in
            .init(status: 200, body: Data(#"{"access_token":"at-1","token_type":"DPoP","expires_in":300}"#.utf8))
        }
    }

    override func tearDown() async throws {
        server.stop()
    }

    var issuer: String { server.baseURL + "/realms/demo" }

    func hostToken(dropping: Set<String> = [], lifetime: TimeInterval = 300) throws -> String {
        let seconds = now.timeIntervalSince1970
        var claims: JSONObject = [
            "iss": "https://auth.host-app.example", "sub": "emp-1001", "aud": .string(issuer),
            "iat": .number(seconds), "exp": .number(seconds + lifetime), "jti": .string(UUID().uuidString),
        ]
        for name in dropping { claims[name] = nil }
        return try JWS.sign(header: ["typ": "JWT"], claims: claims, key: Self.key)
    }

    func session(_ signer: sending any TokenSigner, options: HostTokenSession.Options = .init()) throws -> HostTokenSession {
        let now = now
        return HostTokenSession(
            issuer: issuer, clientId: "host-app", signer: signer, dpop: DPoPSigner(key: try SigningKey.generate(.es256), clock: { now }),
            options: options, clock: { now }
        )
    }

    func testTokensFailingPreValidationNeverReachTheNetwork() async throws {
        let good = try hostToken()
        let parts = good.split(separator: ".").map(String.init)
        let cases: [(String, HostTokenProblem)] = [
            (parts[0] + "." + parts[1], .notThreeParts(found: 2)),
            (parts[0] + "." + parts[1] + ".", .unsigned),
            (try hostToken(dropping: ["iss"]), .missingClaim("iss")),
            (try hostToken(dropping: ["sub"]), .missingClaim("sub")),
            (try hostToken(dropping: ["exp"]), .missingClaim("exp")),
            (try hostToken(lifetime: -HostToken.defaultLeeway), .expired(at: now.addingTimeInterval(-HostToken.defaultLeeway), now: now)),
        ]
        for (token, problem) in cases {
            let session = try session(CallbackSigner { $0(.success(token)) })
            do {
                _ = try await session.send("GET", issuer + "/v1/whoami")
                XCTFail("sent a token with \(problem)")
            } catch let error as KeywardKitError {
                XCTAssertEqual(error, .invalidHostToken(problem))
            }
        }
        XCTAssertEqual(server.requests.count, 0, "nothing reached the listener")

        // The same session with a good token does reach it, so the count above is not an idle listener's.
        _ = try await session(CallbackSigner { $0(.success(good)) }).accessToken()
        XCTAssertEqual(server.requests.count, 1)
    }

    func testExchangeIsTheJWTBearerGrantWithADPoPProof() async throws {
        let token = try hostToken()
        let session = try session(CallbackSigner { $0(.success(token)) })
        let accessToken = try await session.accessToken()
        XCTAssertEqual(accessToken, "at-1")

        let request = try XCTUnwrap(server.requests.first)
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.path, "/realms/demo/protocol/openid-connect/token")
        XCTAssertEqual(request.headers["content-type"], "application/x-www-form-urlencoded")
        XCTAssertEqual(request.form, [
            "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": token, "client_id": "host-app",
        ])
        let proof = try JWS.parse(try XCTUnwrap(request.headers["dpop"]))
        XCTAssertEqual(proof.header["typ"], "dpop+jwt")
        let claims = try proof.claims()
        XCTAssertEqual(claims["htm"], "POST")
        XCTAssertEqual(claims["htu"], .string(session.tokenEndpoint))
    }

    func testSignerGetsAnEmptyUnsignedToken() async throws {
        let token = try hostToken()
        let signer = RecordingSigner(token: token)
        _ = try await session(signer).accessToken()
        XCTAssertEqual(signer.received, [""])
    }

    func testOnlyTheFirstAnswerOfASignerCounts() async throws {
        let token = try hostToken()
        let session = try session(CallbackSigner { handler in
            handler(.success(token))
            handler(.success("second.answer.ignored"))
            handler(.failure(SignerFailure.offline))
        })
        _ = try await session.accessToken()
        XCTAssertEqual(server.requests.first?.form["assertion"], token)
    }

    func testSignerAnsweringLaterOnAnotherThreadIsAwaited() async throws {
        let token = try hostToken()
        let session = try session(CallbackSigner { handler in
            nonisolated(unsafe) let handler = handler
            Thread.detachNewThread { handler(.success(token)) }
        })
        let accessToken = try await session.accessToken()
        XCTAssertEqual(accessToken, "at-1")
    }

    func testSignerThatNeverAnswersTimesOutAndNothingIsSent() async throws {
        let session = try session(CallbackSigner { _ in }, options: .init(signerTimeout: .milliseconds(20)))
        do {
            _ = try await session.accessToken()
            XCTFail("a signer that never answered produced a token")
        } catch let error as KeywardKitError {
            XCTAssertEqual(error, .signerTimedOut(after: .milliseconds(20)))
        }
        XCTAssertEqual(server.requests.count, 0)
    }

    func testSignerFailureIsTheHostAppsOwnError() async throws {
        let session = try session(CallbackSigner { $0(.failure(SignerFailure.offline)) })
        do {
            _ = try await session.accessToken()
            XCTFail("a failed signer produced a token")
        } catch {
            XCTAssertEqual(error as? SignerFailure, .offline)
        }
        XCTAssertEqual(server.requests.count, 0)
    }

    func testAsyncSignerThatHangsTimesOutAndIsCancelled() async throws {
        let cancelled = AsyncStream<Void>.makeStream()
        let signer = HangingSigner(cancelled: cancelled.continuation)
        let now = now
        let session = HostTokenSession(
            issuer: issuer, clientId: "host-app", signer: signer, dpop: DPoPSigner(key: try SigningKey.generate(.es256), clock: { now }),
            options: .init(signerTimeout: .milliseconds(20)), clock: { now }
        )
        do {
            _ = try await session.accessToken()
            XCTFail("a hanging signer produced a token")
        } catch let error as KeywardKitError {
            XCTAssertEqual(error, .signerTimedOut(after: .milliseconds(20)))
        }
        for await _ in cancelled.stream { break }  // the signer's task saw its cancellation
        XCTAssertEqual(server.requests.count, 0)
    }
}

enum SignerFailure: Error, Equatable { case offline }

/// A host app's callback signer whose body the test writes.
final class CallbackSigner: TokenSigner {
    let body: (@escaping ResultHandler<String>) -> Void
    init(_ body: @escaping (@escaping ResultHandler<String>) -> Void) { self.body = body }
    func sign(_ unsignedToken: String, resultHandler: @escaping ResultHandler<String>) { body(resultHandler) }
}

/// Records the deprecated argument it is given.
final class RecordingSigner: TokenSigner, Sendable {
    let token: String
    private let arguments = Mutex<[String]>([])
    init(token: String) { self.token = token }
    var received: [String] { arguments.withLock { $0 } }
    func sign(_ unsignedToken: String, resultHandler: @escaping ResultHandler<String>) {
        arguments.withLock { $0.append(unsignedToken) }
        resultHandler(.success(token))
    }
}

/// Never answers until cancelled, and says when it is.
struct HangingSigner: AsyncTokenSigner {
    let cancelled: AsyncStream<Void>.Continuation
    func signedToken() async throws -> String {
        do {
            while true { try await Task.sleep(for: .seconds(3600)) }
        } catch {
            cancelled.yield()
            throw error
        }
    }
}
