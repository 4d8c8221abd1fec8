// Having Google decode Play Integrity tokens, and reading its answer as a verdict or a refusal.
import AsyncHTTPClient
import Foundation
import KeywardAttestation
import KeywardJOSE
import NIOCore

/// Play Integrity tokens decoded by Google: `POST {endpoint}/v1/{packageName}:decodeIntegrityToken` with
/// `{"integrityToken": …}` and the caller's OAuth access token (scope playintegrity; getting one from a service
/// account is the caller's business), answered with `{"tokenPayloadExternal": verdict}`. Standard requests can only
/// be decoded this way; classic ones also locally (`PlayIntegrityLocalDecoder`). The verdict checks are the same.
///
/// Google's answer is the verdict: a 400 means Google could not decode the token (`UNDECRYPTABLE`); anything else
/// that is not a verdict — no access token, no answer in time, 401/403 (credentials, or a package not linked to the
/// project), 429, 5xx, an answer without `tokenPayloadExternal` — says nothing about the device and is
/// `VERIFIER_UNAVAILABLE`.
struct GooglePlayIntegrityDecoder: PlayIntegrityDecoder {
    static let defaultEndpoint = "https://playintegrity.googleapis.com"
    /// Google's answers are a few kilobytes; anything past this is not one.
    static let maxBodyBytes = 64 * 1024

    var source: PlayIntegritySource { .google }

    let packageName: String
    let endpoint: String
    let httpClient: HTTPClient
    let timeout: TimeAmount
    let accessToken: @Sendable () async throws -> String

    /// `endpoint` is configurable for tests (a local server); `packageName` is the app's package, which names the
    /// Google Cloud project link: only a Java-style package name is taken, so it cannot reshape the URL.
    init(
        packageName: String, endpoint: String = Self.defaultEndpoint, httpClient: HTTPClient = .shared,
        timeout: TimeAmount = .seconds(10), accessToken: @escaping @Sendable () async throws -> String
    ) throws(AttestationFailure) {
        guard Self.isPackageName(packageName) else {
            throw AttestationFailure(.malformed, "\"\(packageName.prefix(128))\" is not an Android package name")
        }
        self.packageName = packageName
        self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        self.httpClient = httpClient
        self.timeout = timeout
        self.accessToken = accessToken
    }

    /// Dot-separated segments of ASCII letters, digits and underscores, each starting with a letter, at least two
    /// (what Android accepts as an application id).
    static func isPackageName(_ name: String) -> Bool {
        let segments = name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
        return name.utf8.count <= 255 && segments.count >= 2 && segments.allSatisfy { segment in
            guard let first = segment.first, isLetter(first) else { return false }
            return segment.allSatisfy { isLetter($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "_") }
        }
    }

    var url: String { "\(endpoint)/v1/\(packageName):decodeIntegrityToken" }

    func decode(_ token: String, at time: Date) async throws(AttestationFailure) -> JSONObject {
        try PlayIntegrityToken.checkShape(token)
        let bearer: String
        do {
            bearer = try await accessToken()
        } catch {
            throw AttestationFailure(.verifierUnavailable, "no access token for decodeIntegrityToken: \(error)")
        }
        let (status, body) = try await post(StrictJSON.serialize(["integrityToken": .string(token)]), bearer: bearer)
        return try Self.verdict(status: status, body: body)
    }

    /// Google's answer as a verdict payload, or the refusal it means.
    static func verdict(status: UInt, body: [UInt8]) throws(AttestationFailure) -> JSONObject {
        let answer = try? StrictJSON.parseObject(body)
        switch status {
        case 200:
            guard let payload = answer?["tokenPayloadExternal"]?.objectValue else {
                throw AttestationFailure(.verifierUnavailable, "decodeIntegrityToken answered 200 without tokenPayloadExternal")
            }
            return payload
        case 400:
            throw AttestationFailure(.undecryptable, "Google could not decode the token: \(googleMessage(answer))")
        default:
            throw AttestationFailure(.verifierUnavailable, "decodeIntegrityToken answered HTTP \(status): \(googleMessage(answer))")
        }
    }

    /// `error.message` of Google's error body, shortened, for the detail.
    private static func googleMessage(_ answer: JSONObject?) -> String {
        guard let message = answer?["error"]?.objectValue?["message"]?.stringValue else { return "no error message" }
        return String(message.prefix(200))
    }

    /// One deadline for the whole exchange, body included (AsyncHTTPClient's own ends with the response head).
    private func post(_ body: [UInt8], bearer: String) async throws(AttestationFailure) -> (UInt, [UInt8]) {
        var prepared = HTTPClientRequest(url: url)
        prepared.method = .POST
        prepared.headers.add(name: "Authorization", value: "Bearer \(bearer)")
        prepared.headers.add(name: "Content-Type", value: "application/json")
        prepared.headers.add(name: "Accept", value: "application/json")
        prepared.body = .bytes(ByteBuffer(bytes: body))
        let (request, client, timeout) = (prepared, httpClient, timeout)
        do {
            return try await withThrowingTaskGroup(of: (UInt, [UInt8])?.self) { group in
                group.addTask {
                    let response = try await client.execute(request, timeout: timeout)
                    let body = try await response.body.collect(upTo: Self.maxBodyBytes)
                    return (response.status.code, Array(body.readableBytesView))
                }
                group.addTask {
                    try await Task.sleep(for: .nanoseconds(timeout.nanoseconds))
                    return nil
                }
                defer { group.cancelAll() }
                guard let answer = try await group.next() ?? nil else {
                    throw AttestationFailure(.verifierUnavailable, "decodeIntegrityToken did not answer within \(timeout.nanoseconds / 1_000_000_000) s")
                }
                return answer
            }
        } catch let failure as AttestationFailure {
            throw failure
        } catch is NIOTooManyBytesError {
            throw AttestationFailure(.verifierUnavailable, "decodeIntegrityToken answered with more than \(Self.maxBodyBytes) bytes")
        } catch {
            throw AttestationFailure(.verifierUnavailable, "decodeIntegrityToken could not be reached: \(error)")
        }
    }
}
