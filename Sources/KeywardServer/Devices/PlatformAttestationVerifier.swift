// Judging App Attest, Android Key Attestation and Play Integrity with an app's settings at registration.
import Crypto
import Foundation
import KeywardAttestation
import KeywardJOSE

/// The attestation verifiers of KeywardAttestation, applied with an app's settings — the same code
/// `keyward attestation verify` runs for an operator.
struct PlatformAttestationVerifier: DeviceAttestationVerifier {
    /// Apple's App Attestation root (tests pin a root of their own to forge attestations).
    var appleRoots: PinnedRoots = .appleAppAttestation
    /// Google's roots, plus any the operator added.
    var androidRoots: PinnedRoots = .googleHardwareAttestation
    /// The operator's copy of Google's attestation status list, when configured.
    var androidRevocations: RevocationListFile? = nil
    /// Said once when an Android key is attested without `androidRevocations`.
    var missingRevocationList: MissingRevocationListWarning? = nil
    /// Opens apps' sealed Play Integrity keys.
    var masterKey: MasterKey? = nil
    /// Google's `decodeIntegrityToken` for an app's package, when the server has a service account for it.
    var googlePlayIntegrity: (@Sendable (String) throws(AttestationFailure) -> any PlayIntegrityDecoder)? = nil

    func verify(
        _ attestation: RegistrationRequest.Attestation, app: DeviceApp, binding: BindingNonce, publicKey: [UInt8], now: Date
    ) async throws(AttestationFailure) -> VerifiedAttestation {
        switch attestation {
        case .appAttest(let keyId, let object):
            return try await appAttest(keyId: keyId, object: object, app: app, binding: binding, now: now)
        case .androidKey(let chain):
            return try await androidKey(chain: chain, app: app, binding: binding, publicKey: publicKey, now: now)
        case .playIntegrity(let token):
            return try await playIntegrity(token: token, app: app, binding: binding, now: now)
        }
    }

    /// App Attest attests a key of its own; the registered key is bound through clientDataHash, in one of the
    /// forms installations use (`BindingNonce.AppAttestForm`), tried in order.
    private func appAttest(keyId: String, object: [UInt8], app: DeviceApp, binding: BindingNonce, now: Date) async throws(AttestationFailure) -> VerifiedAttestation {
        guard app.platform == .ios, let appleAppId = app.appleAppId else {
            throw AttestationFailure(.malformed, "an App Attest attestation for an \(app.platform.rawValue) app")
        }
        let environment: AppAttestEnvironment = app.environment == .production ? .production : .development
        let verifier = AppAttestVerifier(appID: appleAppId, environment: environment, roots: appleRoots)
        var mismatch: AttestationFailure?
        for form in BindingNonce.AppAttestForm.allCases {
            do throws(AttestationFailure) {
                let result = try await verifier.verifyAttestation(object, clientDataHash: binding.clientDataHash(form), keyIDBase64: keyId, at: now)
                return VerifiedAttestation(
                    summary: [
                        "type": .string("app-attest"), "binding": .string(form.rawValue), "key_id": .string(result.keyIDBase64),
                        "environment": .string(result.environment.rawValue),
                    ],
                    appAttestKeyId: result.keyIDBase64, appAttestPublicKey: Array(result.publicKey.x963Representation)
                )
            } catch where error.reason == .nonceMismatch {
                mismatch = error
            }
        }
        throw mismatch ?? AttestationFailure(.nonceMismatch, "no binding form matched")
    }

    /// Android Key Attestation certifies the registered key itself: the leaf's key must be it.
    private func androidKey(chain: [[UInt8]], app: DeviceApp, binding: BindingNonce, publicKey: [UInt8], now: Date) async throws(AttestationFailure) -> VerifiedAttestation {
        guard app.platform == .android else {
            throw AttestationFailure(.malformed, "an Android Key Attestation for an \(app.platform.rawValue) app")
        }
        guard let key = try? P256.Signing.PublicKey(x963Representation: publicKey), let jwk = try? JWK(subjectPublicKeyInfo: Array(key.derRepresentation)) else {
            throw AttestationFailure(.malformed, "the registered key is not a P-256 point")
        }
        let policy = AndroidAttestationPolicy(
            expectedChallenge: binding.digest,
            // Verified boot and a locked bootloader for production apps; development apps run on test devices.
            requireVerifiedBoot: app.environment == .production,
            allowedPackageNames: Set(app.packages),
            allowedSigningCertDigests: Set(app.signingCertDigests.compactMap { HexDigit.bytes($0) }),
            registeredPublicKey: jwk
        )
        if androidRevocations == nil { missingRevocationList?.androidKeyVerified() }
        let verifier = AndroidKeyAttestationVerifier(roots: androidRoots, revocationList: androidRevocations?.current)
        let result = try await verifier.verify(try AndroidCertificateChain(der: chain), policy: policy, at: now)
        var summary: JSONObject = [
            "type": .string("android-key"),
            "security_level": .string(result.attestationSecurityLevel.description),
            "attestation_version": .number(Double(result.attestationVersion)),
        ]
        if let state = result.verifiedBootState { summary["verified_boot_state"] = .string("\(state)") }
        if let locked = result.deviceLocked { summary["device_locked"] = .bool(locked) }
        if let package = result.packageNames.first { summary["package"] = .string(package) }
        return VerifiedAttestation(summary: summary)
    }

    /// Play Integrity (classic request) says the app and device are genuine; the key is bound through the request
    /// nonce (the binding nonce in web-safe base64, as Play wants it) and its possession by the registration's proof.
    private func playIntegrity(token: String, app: DeviceApp, binding: BindingNonce, now: Date) async throws(AttestationFailure) -> VerifiedAttestation {
        guard app.platform == .android else {
            throw AttestationFailure(.malformed, "a Play Integrity token for an \(app.platform.rawValue) app")
        }
        let decoder = try playIntegrityDecoder(for: app)
        let policy = PlayIntegrityPolicy(
            packageNames: app.packages, expectedNonce: binding.playIntegrityNonce,
            allowedCertificateDigests: Set(app.signingCertDigests.compactMap { HexDigit.bytes($0) }),
            // Development apps run on emulators and test devices.
            deviceIntegrity: app.environment == .production ? .device : .relaxed
        )
        let result = try await PlayIntegrityVerifier(decoder: decoder).verify(token, policy: policy, at: now)
        let verdict = result.verdict
        return VerifiedAttestation(summary: [
            "type": .string("play-integrity"), "app_recognition": .string(verdict.appRecognitionVerdict),
            "device_recognition": .array(verdict.deviceRecognitionVerdicts.map(JSONValue.string)),
            "package": .string(verdict.packageName ?? verdict.requestPackageName),
        ])
    }

    /// Google for apps set to it (the request goes to the app's first package), else the app's own keys.
    private func playIntegrityDecoder(for app: DeviceApp) throws(AttestationFailure) -> any PlayIntegrityDecoder {
        if app.playIntegrityGoogle {
            guard let googlePlayIntegrity, let package = app.packages.first else {
                throw AttestationFailure(.verifierUnavailable, "app '\(app.appId)' uses Google's decodeIntegrityToken, and the server has no devices.playIntegrity.serviceAccountFile")
            }
            return try googlePlayIntegrity(package)
        }
        let keys: PlayIntegrityKeys?
        do {
            keys = try masterKey.flatMap { try PlayIntegrityKeys.opened(for: app, with: $0) }
        } catch {
            throw AttestationFailure(.verifierUnavailable, "the app's Play Integrity keys cannot be opened")
        }
        guard let keys else {
            throw AttestationFailure(.verifierUnavailable, "app '\(app.appId)' has no Play Integrity keys (keyward apps add --play-integrity-decryption-key-file …)")
        }
        return try keys.decoder()
    }
}
