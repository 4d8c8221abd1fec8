// Verifying an app's App Attest attestations, cheapest checks first, against Apple's pinned root.
import Crypto
import Foundation
import KeywardJOSE
import X509

/// Verifies App Attest attestations and assertions for one app, with the steps of Apple's "Validating apps that
/// connect to your server"; a refusal carries the reason of the first step that failed.
///
/// The steps run cheapest first: whatever an object says about itself (rpIdHash, counter, aaguid, credential id
/// and key, the presence of the certified nonce) is judged before any signature is verified, so a client cannot
/// make the server verify a certificate chain, or an assertion signature, for an object already wrong in a plain
/// field (security review, issue 16). The bindings that mean something only for a verified certificate (the
/// certified nonce's value, the certified key) run after the chain.
///
/// Pure: the input bytes, the app's policy and an explicit verification time in, a verdict out.
public struct AppAttestVerifier: Sendable {
    /// "TEAMID.bundle.id", whose SHA-256 is the rpIdHash of every attestation and assertion.
    public let appID: String
    /// The one environment this app's attestations must come from.
    public let environment: AppAttestEnvironment
    public let roots: PinnedRoots
    /// Seconds the credential certificate's notBefore may lie after the verification time: Apple dates it from the
    /// device's request, and device clocks run ahead. Expiry and the intermediate's dates have no leeway.
    public let leafNotBeforeLeeway: TimeInterval
    let rpIDHash: [UInt8]

    public init(
        appID: String, environment: AppAttestEnvironment, roots: PinnedRoots = .appleAppAttestation,
        leafNotBeforeLeeway: TimeInterval = PinnedRoots.defaultLeafNotBeforeLeeway
    ) {
        self.appID = appID
        self.environment = environment
        self.roots = roots
        self.leafNotBeforeLeeway = leafNotBeforeLeeway
        self.rpIDHash = Array(SHA256.hash(data: Array(appID.utf8)))
    }

    /// Verifies an attestation object.
    ///
    /// - Parameters:
    ///   - attestationObject: the CBOR bytes the app sent.
    ///   - clientDataHash: the 32 bytes the app passed to `attestKey` (how they are derived from the challenge is
    ///     the caller's protocol).
    ///   - keyID: the key id the app sent, if it sent one; it must then be the attested key's.
    ///   - time: when the certificates must be valid.
    public func verifyAttestation(
        _ attestationObject: [UInt8], clientDataHash: [UInt8], keyID: [UInt8]? = nil, at time: Date
    ) async throws(AttestationFailure) -> AppAttestAttestation {
        let object = try AppAttestAttestationObject(cbor: attestationObject)
        try Self.checkInputs(clientDataHash: clientDataHash, keyID: keyID)
        let claim = try checkClaim(of: object, keyID: keyID)
        let leaf = try await roots.verify(chain: object.certificates, at: time, leafNotBeforeLeeway: leafNotBeforeLeeway)
        return try checkCertifiedBindings(of: claim, in: object, certifiedBy: leaf, clientDataHash: clientDataHash)
    }

    /// The same, with the key id as the app sends it: standard base64 of 32 bytes.
    public func verifyAttestation(
        _ attestationObject: [UInt8], clientDataHash: [UInt8], keyIDBase64: String, at time: Date
    ) async throws(AttestationFailure) -> AppAttestAttestation {
        guard let keyID = Data(base64Encoded: keyIDBase64) else {
            throw AttestationFailure(.malformed, "the key id is not base64")
        }
        return try await verifyAttestation(attestationObject, clientDataHash: clientDataHash, keyID: Array(keyID), at: time)
    }

    static func checkInputs(clientDataHash: [UInt8], keyID: [UInt8]?) throws(AttestationFailure) {
        guard clientDataHash.count == 32 else {
            throw AttestationFailure(.malformed, "the client data hash has \(clientDataHash.count) bytes, not 32")
        }
        if let keyID, keyID.count != 32 {
            throw AttestationFailure(.malformed, "the key id has \(keyID.count) bytes, not 32")
        }
    }

    /// What an attestation claims before anything vouches for it: the credential of authData, with its key's id.
    struct Claim {
        let credential: AppAttestAuthenticatorData.AttestedCredential
        let key: COSEP256Key
        let keyID: [UInt8]
    }

    /// The checks that need no signature: authData against the app's policy and against itself, and the presence
    /// of the nonce extension in the credential certificate.
    func checkClaim(of object: AppAttestAttestationObject, keyID expectedKeyID: [UInt8]?) throws(AttestationFailure) -> Claim {
        let authData = object.authenticatorData
        guard let credential = authData.attestedCredential else {
            throw AttestationFailure(.malformed, "authData carries no attested credential")
        }

        guard authData.rpIDHash == rpIDHash else {
            throw AttestationFailure(.rpIdMismatch, "authData's rpIdHash is not SHA-256 of \(appID)")
        }

        guard authData.counter == 0 else {
            throw AttestationFailure(.counterNotIncreasing, "an attestation's counter is \(authData.counter), not 0")
        }

        guard credential.aaguid == environment.aaguid else {
            let other = AppAttestEnvironment.allCases.first { $0.aaguid == credential.aaguid }
            throw AttestationFailure(.aaguidMismatch, "the attestation comes from \(other.map { "the \($0.rawValue)" } ?? "an unknown") environment, the app's policy is \(environment.rawValue)")
        }

        guard let key = COSEP256Key(credential.publicKey) else {
            throw AttestationFailure(.keyIdMismatch, "authData's credential public key is not a P-256 COSE key")
        }
        let keyID = Array(SHA256.hash(data: key.x963Representation))
        guard credential.credentialID == keyID else {
            throw AttestationFailure(.keyIdMismatch, "authData's credential id is not SHA-256 of its credential public key")
        }
        if let expectedKeyID, expectedKeyID != keyID {
            throw AttestationFailure(.keyIdMismatch, "the key id sent is not authData's credential id")
        }

        // Only whether the certificate carries a nonce at all: its value binds authData once the chain vouches for it.
        guard let credentialCertificate = object.certificates.first else {
            throw AttestationFailure(.malformed, "attStmt.x5c is empty")
        }
        _ = try AppleNonceExtension.nonce(in: credentialCertificate)
        return Claim(credential: credential, key: key, keyID: keyID)
    }

    /// The checks after the chain: what the pinned root's certificate vouches for must be what authData says.
    func checkCertifiedBindings(
        of claim: Claim, in object: AppAttestAttestationObject, certifiedBy leaf: Certificate, clientDataHash: [UInt8]
    ) throws(AttestationFailure) -> AppAttestAttestation {
        let nonce = Array(SHA256.hash(data: object.authenticatorData.bytes + clientDataHash))
        guard try AppleNonceExtension.nonce(in: leaf) == nonce else {
            throw AttestationFailure(.nonceMismatch, "the certified nonce is not SHA-256(authData ‖ clientDataHash)")
        }

        guard let publicKey = P256.Signing.PublicKey(leaf.publicKey) else {
            throw AttestationFailure(.keyIdMismatch, "the credential certificate's key is not a P-256 key")
        }
        guard Array(publicKey.x963Representation) == claim.key.x963Representation else {
            throw AttestationFailure(.keyIdMismatch, "authData's credential public key is not the certified key")
        }

        let jwk: JWK
        do {
            jwk = try JWK(subjectPublicKeyInfo: Array(publicKey.derRepresentation))
        } catch {
            throw AttestationFailure(.malformed, "the certified key does not read as a JWK: \(error)")
        }
        return AppAttestAttestation(
            keyID: claim.keyID, publicKey: publicKey, jwk: jwk, counter: object.authenticatorData.counter, environment: environment,
            receipt: object.receipt, authenticatorDataTrailer: claim.credential.trailer
        )
    }
}
