// Tests: the remote Play Integrity decoder against a local stand-in for Google's decodeIntegrityToken.
import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import KeywardAttestation
import KeywardJOSE
import NIOCore
import Synchronization
import XCTest
@testable import KeywardServer

/// The remote Play Integrity decoder against a local stand-in for Google's decodeIntegrityToken (a real socket on
/// 127.0.0.1): what it sends, how each answer is read, and that the verdict checks run on Google's verdict.
final class GooglePlayIntegrityDecoderTests: XCTestCase {
    private static let package = "com.example.keyward"
    private static let nonce = Base64URL.encode(Array(repeating: 0xAB, count: 32))
    private static let time = Date(timeIntervalSince1970: 1_795_000_000)
    /// Google decodes the token; the decoder only checks that it is a token's size and dot-separated base64url.
    static let token = "eyJhbGciOiJBMjU2S1ciLCJlbmMiOiJBMjU2R0NNIn0.d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3dw.aWlpaWlpaWlpaWlp.dGhlIGNpcGhlcnRleHQgb2YgYSB2ZXJkaWN0LCBhcyBsb25nIGFzIGEgc2hvcnQgb25lIHdvdWxkIGJlOiB0aGUgY2lwaGVydGV4dCBvZiBhIHZlcmRpY3QsIGFzIGxvbmcgYXMgYSBzaG9ydCBvbmUgd291bGQgYmU6IHRoZSBjaXBoZXJ0ZXh0IG9mIGEgdmVyZGljdCwgYXMgbG9uZyBhcyBhIHNob3J0IG9uZSB3b3VsZCBiZTogdGhlIGNpcGhlcnRleHQgb2YgYSB2ZXJkaWN0LCBhcyBsb25nIGFzIGEgc2hvcnQgb25lIHdvdWxkIGJlOiA.dHR0dHR0dHR0dHR0dHR0dA"

    private static func verdict(nonce: String = nonce) -> JSONObject {
        [
            "requestDetails": ["requestPackageName": .string(package), "nonce": .string(nonce), "timestampMillis": "1794999990000"],
            "appIntegrity": ["appRecognitionVerdict": "PLAY_RECOGNIZED", "packageName": .string(package), "certificateSha256Digest": ["AAAA"], "versionCode": "7"],
            "deviceIntegrity": ["deviceRecognitionVerdict": ["MEETS_DEVICE_INTEGRITY"]],
            "accountDetails": ["appLicensingVerdict": "UNEVALUATED"],
        ]
    }

    private static let policy = PlayIntegrityPolicy(packageNames: [package], expectedNonce: nonce)

    private static func decoder(_ google: FakeGoogle, timeout: TimeAmount = .seconds(5), accessToken: @escaping @Sendable () async throws -> String = { "ya29.test-token" }) throws -> GooglePlayIntegrityDecoder {
        try GooglePlayIntegrityDecoder(packageName: Self.package, endpoint: google.endpoint, timeout: timeout, accessToken: accessToken)
    }

    private static func assertRefused(
        _ reason: AttestationReason, file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> PlayIntegrityResult
    ) async {
        do {
            _ = try await body()
            XCTFail("verified, expected \(reason.rawValue)", file: file, line: line)
        } catch let failure as AttestationFailure {
            XCTAssertEqual(failure.reason, reason, failure.detail, file: file, line: line)
        } catch {
            XCTFail("not an AttestationFailure: \(error)", file: file, line: line)
        }
    }

    func testGooglesVerdictIsCheckedLikeALocalOne() async throws {
        try await FakeGoogle().run { google in
            google.answer(.ok, ["tokenPayloadExternal": .object(Self.verdict())])
            let verifier = PlayIntegrityVerifier(decoder: try Self.decoder(google))
            let result = try await verifier.verify(Self.token, policy: Self.policy, at: Self.time)
            XCTAssertEqual(result.source, .google)
            XCTAssertEqual(result.verdict.nonce, Self.nonce)
            XCTAssertEqual(result.verdict.versionCode, 7)
            XCTAssertEqual(result.verdict.appLicensingVerdict, "UNEVALUATED")
            XCTAssertEqual(result.checks.first?.detail, "decoded by Google's decodeIntegrityToken")

            let request = try XCTUnwrap(google.requests.first)
            XCTAssertEqual(request.method, "POST")
            XCTAssertEqual(request.path, "/v1/com.example.keyward:decodeIntegrityToken")
            XCTAssertEqual(request.authorization, "Bearer ya29.test-token")
            XCTAssertEqual(request.contentType, "application/json")
            XCTAssertEqual(try StrictJSON.parseObject(request.body), ["integrityToken": .string(Self.token)])

            google.answer(.ok, ["tokenPayloadExternal": .object(Self.verdict(nonce: "b3RoZXI"))])
            await Self.assertRefused(.nonceMismatch) { try await verifier.verify(Self.token, policy: Self.policy, at: Self.time) }
            google.answer(.ok, ["tokenPayloadExternal": .object(Self.verdict())])
            await Self.assertRefused(.stale) { try await verifier.verify(Self.token, policy: Self.policy, at: Self.time.addingTimeInterval(3600)) }
        }
    }

    func testATokenGoogleCannotDecodeIsUndecryptable() async throws {
        try await FakeGoogle().run { google in
            google.answer(.badRequest, ["error": ["code": 400, "message": "Integrity token cannot be decoded", "status": "INVALID_ARGUMENT"]])
            let verifier = PlayIntegrityVerifier(decoder: try Self.decoder(google))
            await Self.assertRefused(.undecryptable) { try await verifier.verify(Self.token, policy: Self.policy, at: Self.time) }
        }
    }

    func testAnswersThatSayNothingAboutTheDeviceAreVerifierUnavailable() async throws {
        try await FakeGoogle().run { google in
            let verifier = PlayIntegrityVerifier(decoder: try Self.decoder(google))
            let answers: [(HTTPResponse.Status, JSONObject)] = [
                (.unauthorized, ["error": ["code": 401, "message": "Request had invalid authentication credentials."]]),
                (.forbidden, ["error": ["code": 403, "message": "The caller does not have permission"]]),
                (.tooManyRequests, [:]),
                (.internalServerError, [:]),
                (.ok, ["somethingElse": true]),
                (.ok, ["tokenPayloadExternal": "not an object"]),
            ]
            for (status, body) in answers {
                google.answer(status, body)
                await Self.assertRefused(.verifierUnavailable) { try await verifier.verify(Self.token, policy: Self.policy, at: Self.time) }
            }
            google.answerRaw(.ok, Array("not json".utf8))
            await Self.assertRefused(.verifierUnavailable) { try await verifier.verify(Self.token, policy: Self.policy, at: Self.time) }
            google.answerRaw(.ok, Array(repeating: UInt8(ascii: " "), count: GooglePlayIntegrityDecoder.maxBodyBytes + 1))
            await Self.assertRefused(.verifierUnavailable) { try await verifier.verify(Self.token, policy: Self.policy, at: Self.time) }
        }
    }

    func testNoAccessTokenMeansNoRequest() async throws {
        struct NoCredentials: Error {}
        try await FakeGoogle().run { google in
            let verifier = PlayIntegrityVerifier(decoder: try Self.decoder(google, accessToken: { throw NoCredentials() }))
            await Self.assertRefused(.verifierUnavailable) { try await verifier.verify(Self.token, policy: Self.policy, at: Self.time) }
            XCTAssertTrue(google.requests.isEmpty)
        }
    }

    func testASlowAnswerIsVerifierUnavailable() async throws {
        try await FakeGoogle().run { google in
            google.answer(.ok, ["tokenPayloadExternal": .object(Self.verdict())], delay: .seconds(1))
            let verifier = PlayIntegrityVerifier(decoder: try Self.decoder(google, timeout: .milliseconds(200)))
            await Self.assertRefused(.verifierUnavailable) { try await verifier.verify(Self.token, policy: Self.policy, at: Self.time) }
        }
    }

    func testGoogleIsUnreachable() async throws {
        // A port nothing listens on: the fake server's, after it stopped.
        let endpoint = Mutex("")
        try await FakeGoogle().run { google in endpoint.withLock { $0 = google.endpoint } }
        let decoder = try GooglePlayIntegrityDecoder(packageName: Self.package, endpoint: endpoint.withLock { $0 }, timeout: .seconds(1)) { "t" }
        await Self.assertRefused(.verifierUnavailable) { try await PlayIntegrityVerifier(decoder: decoder).verify(Self.token, policy: Self.policy, at: Self.time) }
    }

    func testTokensThatAreNotCompactJOSEAreNeverSent() async throws {
        try await FakeGoogle().run { google in
            let verifier = PlayIntegrityVerifier(decoder: try Self.decoder(google))
            for token in ["", "a token with spaces", "x\"}, \"evil\": {", String(repeating: "A", count: PlayIntegrityToken.maxSize + 1)] {
                await Self.assertRefused(.malformed) { try await verifier.verify(token, policy: Self.policy, at: Self.time) }
            }
            XCTAssertTrue(google.requests.isEmpty)
        }
    }

    func testPackageNameCannotReshapeTheURL() {
        for name in ["com.example.keyward", "com.Example_1.app"] {
            XCTAssertNoThrow(try GooglePlayIntegrityDecoder(packageName: name) { "t" }, name)
        }
        for name in ["keyward", "com..example", "com.example/../x", "com.example:other", "com.1example", "", ".com.example", "com.exämple"] {
            XCTAssertThrowsError(try GooglePlayIntegrityDecoder(packageName: name) { "t" }, name) { error in
                XCTAssertEqual((error as? AttestationFailure)?.reason, .malformed)
            }
        }
        let decoder = try? GooglePlayIntegrityDecoder(packageName: "com.example.keyward") { "t" }
        XCTAssertEqual(decoder?.url, "https://playintegrity.googleapis.com/v1/com.example.keyward:decodeIntegrityToken")
    }
}

/// Google's decodeIntegrityToken, played by a local server: it records each request and gives the answer set last.
final class FakeGoogle: Sendable {
    struct Recorded: Sendable {
        let method: String
        let path: String
        let authorization: String?
        let contentType: String?
        let body: [UInt8]
    }

    private struct State {
        var status: HTTPResponse.Status = .internalServerError
        var body: [UInt8] = []
        var delay: Duration = .zero
        var requests: [Recorded] = []
        var endpoint = ""
    }

    private let state = Mutex(State())

    var endpoint: String { state.withLock { $0.endpoint } }
    var requests: [Recorded] { state.withLock { $0.requests } }

    func answer(_ status: HTTPResponse.Status, _ body: JSONObject, delay: Duration = .zero) {
        answerRaw(status, StrictJSON.serialize(body), delay: delay)
    }

    func answerRaw(_ status: HTTPResponse.Status, _ body: [UInt8], delay: Duration = .zero) {
        state.withLock {
            $0.status = status
            $0.body = body
            $0.delay = delay
        }
    }

    func run(_ body: @Sendable (FakeGoogle) async throws -> Void) async throws {
        let router = Router()
        router.post("/v1/:target") { [self] request, context -> Response in
            let received = try await request.body.collect(upTo: 1 << 20)
            let (status, answer, delay) = self.state.withLock { current in
                current.requests.append(Recorded(
                    method: request.method.rawValue, path: request.uri.path,
                    authorization: request.headers[.authorization], contentType: request.headers[.contentType],
                    body: Array(received.readableBytesView)
                ))
                return (current.status, current.body, current.delay)
            }
            if delay > .zero { try await Task.sleep(for: delay) }
            return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: answer)))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            self.state.withLock { $0.endpoint = "http://127.0.0.1:\(client.port ?? 0)" }
            try await body(self)
        }
    }
}
