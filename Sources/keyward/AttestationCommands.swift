// `keyward attestation verify` and `keyward assertion verify`: an operator checks what a device sent, offline,
// through the verifiers the server runs, and reads the verdict as one JSON object.
import ArgumentParser
import Crypto
import Foundation
import KeywardAttestation
import KeywardJOSE

struct Attestation: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a device's attestation offline, with the server's own verifiers.",
        subcommands: [Verify.self]
    )

    enum Platform: String, ExpressibleByArgument, CaseIterable {
        case ios, android
    }

    enum KeyAlgorithm: String, ExpressibleByArgument, CaseIterable {
        case ecP256 = "EC-P256", rsa = "RSA", any

        var requirement: AndroidAttestationPolicy.KeyAlgorithmRequirement {
            switch self {
            case .ecP256: .ecP256
            case .rsa: .rsa
            case .any: .any
            }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify an App Attest attestation object or an Android Key Attestation chain.",
            discussion: """
                Prints one JSON object: "valid", "reason" (the stable code of the first failed check, e.g. \
                CHAIN_INVALID, NONCE_MISMATCH, RP_ID_MISMATCH, AAGUID_MISMATCH, SOFTWARE_KEY, CHALLENGE_MISMATCH, \
                MALFORMED) with "detail", and what was read. Exits 0 only when valid.
                iOS: FILE holds the attestation object as base64 (standard or url-safe; whitespace ignored) or raw \
                CBOR; give the client data (--client-data-file, hashed with SHA-256) or its hash \
                (--client-data-hash, base64: for clients that pass a hash, e.g. the binding nonce). \
                Android: the chain as one PEM file (leaf first) or DER files in order; without policy flags the \
                chain to Google's roots, the challenge and a hardware security level are checked and the rest \
                reported.
                """
        )
        @Option(help: "ios or android.") var platform: Platform
        @Option(help: "When the certificates must be valid, RFC 3339 (default: now).") var at: String?
        @Option(name: .customLong("app-id"), help: "iOS: TEAMID.bundle.id.") var appId: String?
        @Option(help: "iOS: development or production (the App Attest environment accepted).") var environment: AppAttestEnvironment?
        @Option(name: .customLong("client-data-file"), help: "iOS: the client data the app hashed.") var clientDataFile: String?
        @Option(name: .customLong("client-data-hash"), help: "iOS: the 32-byte clientDataHash, base64.") var clientDataHash: String?
        @Option(name: .customLong("key-id"), help: "iOS: the key id the app sent (base64); checked when given.") var keyId: String?
        @Option(help: "Android: the expected attestation challenge, base64.") var challenge: String?
        @Option(name: .customLong("package"), help: "Android: an allowed package name; repeat for several.") var packages: [String] = []
        @Option(name: .customLong("signing-cert-digest"), help: "Android: an allowed signing-certificate SHA-256, hex; repeat.")
        var digests: [String] = []
        @Flag(name: .customLong("allow-software"), help: "Android: accept a key kept in software.") var allowSoftware = false
        @Flag(name: .customLong("require-verified-boot"), help: "Android: require verified boot and a locked bootloader.")
        var requireVerifiedBoot = false
        @Option(name: .customLong("key-algorithm"), help: "Android: EC-P256, RSA or any (default any).") var keyAlgorithm: KeyAlgorithm = .any
        @Option(name: .customLong("extra-root"), help: "Android: a PEM file of roots to trust besides Google's (e.g. its 2016 RSA certificate).")
        var extraRoots: String?
        @Option(name: .customLong("revocation-list"), help: "Android: Google's attestation status list (JSON).") var revocationList: String?
        @Argument(help: "The attestation object (iOS), or the chain's PEM file or DER files (Android).") var files: [String]

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("give the attestation FILE") }
            switch platform {
            case .ios:
                guard appId != nil, environment != nil else { throw ValidationError("--platform ios needs --app-id and --environment") }
                guard (clientDataFile == nil) != (clientDataHash == nil) else {
                    throw ValidationError("give one of --client-data-file and --client-data-hash")
                }
                guard files.count == 1 else { throw ValidationError("--platform ios reads one attestation FILE") }
            case .android:
                guard challenge != nil else { throw ValidationError("--platform android needs --challenge (base64)") }
            }
        }

        func run() async throws {
            let verdict: Verdict
            do throws(AttestationFailure) {
                let time = try OfflineInput.time(at)
                switch platform {
                case .ios: verdict = .valid(try await verifyAppAttest(at: time))
                case .android: verdict = .valid(try await verifyAndroid(at: time))
                }
            } catch {
                verdict = .refused(error)
            }
            try verdict.print()
        }

        private func verifyAppAttest(at time: Date) async throws(AttestationFailure) -> any Encodable {
            let object = try OfflineInput.base64OrRaw(file: files[0])
            let hash = try OfflineInput.clientData(file: clientDataFile, hash: clientDataHash).hashForAttestation()
            let verifier = AppAttestVerifier(appID: appId ?? "", environment: environment ?? .production)
            if let keyId {
                return try await verifier.verifyAttestation(object, clientDataHash: hash, keyIDBase64: keyId, at: time)
            }
            return try await verifier.verifyAttestation(object, clientDataHash: hash, at: time)
        }

        private func verifyAndroid(at time: Date) async throws(AttestationFailure) -> any Encodable {
            let chain = try OfflineInput.androidChain(files: files)
            guard let expected = OfflineInput.base64(challenge ?? "") else { throw AttestationFailure(.malformed, "--challenge is not base64") }
            var policy = AndroidAttestationPolicy.inspection(expectedChallenge: expected)
            policy.allowSoftware = allowSoftware
            policy.requireVerifiedBoot = requireVerifiedBoot
            policy.keyAlgorithm = keyAlgorithm.requirement
            policy.allowedPackageNames = Set(packages)
            policy.allowedSigningCertDigests = Set(try digests.map { digest throws(AttestationFailure) in
                guard let bytes = HexDigit.bytes(digest.replacingOccurrences(of: ":", with: "")), bytes.count == 32 else {
                    throw AttestationFailure(.malformed, "--signing-cert-digest \(digest) is not a SHA-256 digest in hex")
                }
                return bytes
            })
            var roots = PinnedRoots.googleHardwareAttestation
            if let extraRoots { roots = roots.adding(try PinnedRoots(pem: try OfflineInput.text(file: extraRoots))) }
            let revocations = try revocationList.map { path throws(AttestationFailure) in try RevocationList(json: try OfflineInput.data(file: path)) }
            return try await AndroidKeyAttestationVerifier(roots: roots, revocationList: revocations).verify(chain, policy: policy, at: time)
        }
    }
}

struct Assertion: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check an App Attest assertion offline, with the server's own verifier.",
        subcommands: [Verify.self]
    )

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify an App Attest assertion made with an attested key.",
            discussion: """
                FILE holds the assertion as base64 or raw CBOR. Prints one JSON object ("valid", "reason", \
                "detail", and the assertion's "counter"); exits 0 only when valid.
                """
        )
        @Option(name: .customLong("app-id"), help: "TEAMID.bundle.id.") var appId: String
        @Option(name: .customLong("public-key"), help: "A PEM file of the attested key (SubjectPublicKeyInfo).") var publicKey: String
        @Option(name: .customLong("client-data-file"), help: "The client data the app signed over.") var clientDataFile: String?
        @Option(name: .customLong("client-data-hash"), help: "SHA-256 of the client data, base64.") var clientDataHash: String?
        @Option(name: .customLong("previous-counter"), help: "The counter stored for the key (default 0).") var previousCounter: UInt32 = 0
        @Option(help: "The environment of the key's attestation (development or production; default production).")
        var environment: AppAttestEnvironment = .production
        @Argument(help: "The assertion (base64 or raw CBOR).") var file: String

        func validate() throws {
            guard (clientDataFile == nil) != (clientDataHash == nil) else {
                throw ValidationError("give one of --client-data-file and --client-data-hash")
            }
        }

        func run() async throws {
            let verdict: Verdict
            do throws(AttestationFailure) {
                let key: P256.Signing.PublicKey
                do {
                    key = try P256.Signing.PublicKey(pemRepresentation: try OfflineInput.text(file: publicKey))
                } catch let failure as AttestationFailure {
                    throw failure
                } catch {
                    throw AttestationFailure(.malformed, "--public-key is not a PEM P-256 public key")
                }
                let assertion = try OfflineInput.base64OrRaw(file: file)
                let clientData = try OfflineInput.clientData(file: clientDataFile, hash: clientDataHash)
                verdict = .valid(try AppAttestVerifier(appID: appId, environment: environment).verifyAssertion(
                    assertion, clientData: clientData, publicKey: key, previousCounter: previousCounter
                ))
            } catch {
                verdict = .refused(error)
            }
            try verdict.print()
        }
    }
}

extension AppAttestEnvironment: ExpressibleByArgument {}

/// The JSON verdict both commands print: what was read when valid, the first failed check when not.
enum Verdict {
    case valid(any Encodable)
    case refused(AttestationFailure)

    func print() throws {
        var object: [String: Any]
        switch self {
        case .valid(let result):
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            object = (try JSONSerialization.jsonObject(with: try encoder.encode(result)) as? [String: Any]) ?? [:]
            object["valid"] = true
        case .refused(let failure):
            object = ["valid": false, "reason": failure.reason.rawValue, "detail": failure.detail]
        }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        Swift.print(String(decoding: data, as: UTF8.self))
        if case .refused = self { throw ExitCode(1) }
    }
}

/// Reading what an operator hands over: files that may be base64 or raw, PEM chains, times.
enum OfflineInput {
    static func data(file path: String) throws(AttestationFailure) -> Data {
        guard let data = FileManager.default.contents(atPath: path) else { throw AttestationFailure(.malformed, "cannot read \(path)") }
        return data
    }

    static func text(file path: String) throws(AttestationFailure) -> String {
        String(decoding: try data(file: path), as: UTF8.self)
    }

    /// Standard or url-safe base64, padding optional, spaces and line breaks ignored (text pasted from a log).
    static func base64(_ text: String) -> [UInt8]? {
        Base64Variants.decode(text.filter { !$0.isWhitespace })
    }

    /// A file of base64 text (whitespace ignored) or of raw bytes.
    static func base64OrRaw(file path: String) throws(AttestationFailure) -> [UInt8] {
        let bytes = Array(try data(file: path))
        if let text = String(bytes: bytes, encoding: .ascii), let decoded = base64(text), !decoded.isEmpty { return decoded }
        return bytes
    }

    static func clientData(file: String?, hash: String?) throws(AttestationFailure) -> AppAttestClientData {
        if let file { return .data(Array(try data(file: file))) }
        guard let hash, let bytes = base64(hash) else { throw AttestationFailure(.malformed, "--client-data-hash is not base64") }
        return .hash(bytes)
    }

    /// One PEM file of the chain, or DER files in order.
    static func androidChain(files: [String]) throws(AttestationFailure) -> AndroidCertificateChain {
        if files.count == 1 {
            let contents = try data(file: files[0])
            if let text = String(data: contents, encoding: .utf8), text.contains("-----BEGIN") {
                return try AndroidCertificateChain(pem: text)
            }
        }
        var certificates: [[UInt8]] = []
        for file in files { certificates.append(Array(try data(file: file))) }
        return try AndroidCertificateChain(der: certificates)
    }

    static func time(_ text: String?) throws(AttestationFailure) -> Date {
        guard let text else { return Date() }
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        throw AttestationFailure(.malformed, "--at \(text) is not an RFC 3339 time (e.g. 2026-11-25T10:00:00Z)")
    }
}

extension AppAttestClientData {
    /// What an attestation check takes: the hash, computed from the data when the data was given.
    func hashForAttestation() -> [UInt8] {
        switch self {
        case .data(let data): Array(SHA256.hash(data: data))
        case .hash(let hash): hash
        }
    }
}
