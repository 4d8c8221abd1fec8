// Signing a registered device's requests into Keyward's six signed-request headers.
import Crypto
import Foundation
import KeywardJOSE
import KeywardWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Signs requests for a registered device, the way Keyward's signed device requests want them: the message
///
///     METHOD "\n" PATH[?QUERY] "\n" TIMESTAMP "\n" NONCE "\n" hex(SHA-256(BODY))
///
/// (method upper-case, the request target as sent, Unix seconds on the server's clock as far as the device knows
/// it, a fresh UUID, the body's digest in lowercase hex), in six headers. The signature is the device key's (ECDSA
/// P-256 / SHA-256, version `1`), or, for a device registered through App Attest, an App Attest assertion whose
/// client data is the message (version `appattest-1`).
/// ``DeviceRegistrar/send(appId:method:path:body:contentType:)`` uses it and corrects the clock on `CLOCK_SKEW`;
/// ``DeviceRegistrar/requestSigner(appId:)`` hands one out for requests sent some other way.
public struct RequestSigner: Sendable {
    /// The header names.
    public enum Header {
        public static let appId = "X-App-ID"
        public static let deviceId = "X-Device-ID"
        public static let timestamp = "X-Keyward-Timestamp"
        public static let nonce = "X-Keyward-Nonce"
        public static let version = "X-Keyward-Sig-Version"
        public static let signature = "X-Keyward-Signature"
    }

    /// What signs, and so what `X-Keyward-Sig-Version` says.
    enum Credential: Sendable {
        /// The registered device key: version `1`.
        case deviceKey(DeviceKey)
        /// The App Attest key the server accepted at registration: version `appattest-1`.
        case appAttest(keyId: String, asserter: any Asserter)
    }

    /// The app id the device registered for.
    public let appId: String
    /// The registered device's id.
    public let deviceId: String
    /// Milliseconds the server's clock is ahead of this device's; added to every timestamp.
    public let clockOffsetMs: Int64
    let credential: Credential
    let clock: @Sendable () -> Date

    /// A signer for the device `deviceId` of `appId` with its registered ES256 `key`. `clockOffsetMs` is what
    /// ``DeviceRegistrationState/clockOffsetMs`` learned; `clock` gives the device's time.
    public init(appId: String, deviceId: String, key: any JWSSigner, clockOffsetMs: Int64 = 0, clock: @escaping @Sendable () -> Date = { Date() }) throws {
        self.init(appId: appId, deviceId: deviceId, credential: .deviceKey(try DeviceKey(name: "device key", signer: key)), clockOffsetMs: clockOffsetMs, clock: clock)
    }

    /// A signer for the device `deviceId` of `appId` registered through App Attest: `asserter` makes assertions by
    /// the App Attest key `appAttestKeyId` (``DeviceRegistrationState/appAttestKeyId``).
    public init(
        appId: String, deviceId: String, appAttestKeyId: String, asserter: any Asserter, clockOffsetMs: Int64 = 0,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(appId: appId, deviceId: deviceId, credential: .appAttest(keyId: appAttestKeyId, asserter: asserter), clockOffsetMs: clockOffsetMs, clock: clock)
    }

    init(appId: String, deviceId: String, credential: Credential, clockOffsetMs: Int64, clock: @escaping @Sendable () -> Date) {
        self.appId = appId
        self.deviceId = deviceId
        self.credential = credential
        self.clockOffsetMs = clockOffsetMs
        self.clock = clock
    }

    /// What `X-Keyward-Sig-Version` will say: `1` (device key) or `appattest-1` (App Attest assertion).
    public var version: String {
        switch credential {
        case .deviceKey: SignedRequestHeaders.deviceKeyVersion
        case .appAttest: SignedRequestHeaders.appAttestVersion
        }
    }

    /// The headers for `method target` with `body` (empty for none), a new nonce and the current time.
    /// An App Attest signer asks its ``Asserter``, which takes a moment (the Secure Enclave) and advances the key's
    /// counter: headers signed so are meant to be sent once, soon, and in the order they were made.
    public func sign(method: String, target: String, body: [UInt8] = []) async throws -> SignedRequestHeaders {
        let timestamp = String(timestamp())
        let nonce = UUID().uuidString
        let message = Self.message(method: method, target: target, timestamp: timestamp, nonce: nonce, body: body)
        let signature: [UInt8]
        switch credential {
        case .deviceKey(let key): signature = try key.derSignature(message)
        case .appAttest(let keyId, let asserter): signature = try await asserter.assertion(keyId: keyId, clientDataHash: Array(SHA256.hash(data: message)))
        }
        return SignedRequestHeaders(
            appId: appId, deviceId: deviceId, timestamp: timestamp, nonce: nonce, signature: Data(signature).base64EncodedString(), version: version
        )
    }

    /// Unix seconds on the server's clock, as far as the device knows it.
    public func timestamp() -> Int64 {
        // Saturating: an offset read from a damaged state file must not trap.
        let (sum, overflow) = Int64((clock().timeIntervalSince1970 * 1000).rounded(.down)).addingReportingOverflow(clockOffsetMs)
        let milliseconds = overflow ? (clockOffsetMs < 0 ? Int64.min / 2 : Int64.max / 2) : sum
        // Whole seconds, rounded down also before 1970, as the server counts them.
        return milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
    }

    /// The bytes a request's signature covers.
    public static func message(method: String, target: String, timestamp: String, nonce: String, body: [UInt8]) -> [UInt8] {
        SignedRequestMessage.bytes(method: method, target: target, timestamp: timestamp, nonce: nonce, bodyDigestHex: HexDigit.lowercase(SHA256.hash(data: body)))
    }

    /// The request target of `url` as URLSession sends it: the percent-encoded path ("/" when empty) and query.
    public static func target(of url: URL) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        let path = components?.percentEncodedPath ?? ""
        let query = components?.percentEncodedQuery.map { "?" + $0 } ?? ""
        return (path.isEmpty ? "/" : path) + query
    }
}

/// The six headers of one signed request.
public struct SignedRequestHeaders: Sendable, Equatable {
    public let appId: String
    public let deviceId: String
    /// Unix seconds, decimal.
    public let timestamp: String
    /// A UUID, never used twice.
    public let nonce: String
    /// Base64 of the signature over ``RequestSigner/message(method:target:timestamp:nonce:body:)``: the device key's
    /// in DER (version `1`), or the App Attest assertion whose client data is that message (version `appattest-1`).
    public let signature: String
    /// `1`: signed by the registered device key; `appattest-1`: an App Attest assertion.
    public let version: String

    static let deviceKeyVersion = "1"
    static let appAttestVersion = "appattest-1"

    /// The headers by name, in the order the README lists them.
    public var fields: [(name: String, value: String)] {
        [
            (RequestSigner.Header.appId, appId), (RequestSigner.Header.deviceId, deviceId), (RequestSigner.Header.timestamp, timestamp),
            (RequestSigner.Header.nonce, nonce), (RequestSigner.Header.version, version), (RequestSigner.Header.signature, signature),
        ]
    }

    /// Sets the six headers on `request`, replacing any of the same names.
    public func apply(to request: inout URLRequest) {
        for field in fields { request.setValue(field.value, forHTTPHeaderField: field.name) }
    }
}
