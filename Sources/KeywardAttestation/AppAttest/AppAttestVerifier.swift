import Crypto
import Foundation
import KeywardJOSE
import X509

/// Verifies App Attest attestations and assertions for one app, with the steps of Apple's "Validating apps that
/// connect to your server" in their order; a refusal carries the reason of the first step that failed.
///
/// Pure: the input bytes, the app's policy and an explicit verification time in, a verdict out.
public struct AppAttestVerifier: Sendable {
    /// "TEAMID.bundle.id", whose SHA-256 is the rpIdHash of every attestation and assertion.
    public let appID: String
    /// The one environment this app's attestations must come from.
    public let environment: AppAttestEnvironment
    public let roots: PinnedRoots
    let rpIDHash: [UInt8]

    public init(appID: String, environment: AppAttestEnvironment, roots: PinnedRoots = .appleAppAttestation) {
        self.appID = appID
        self.environment = environment
        self.roots = roots
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
        let leaf = try await roots.verify(chain: object.certificates, at: time)
        return try checkAttestedContents(of: object, certifiedBy: leaf, clientDataHash: clientDataHash, keyID: keyID)
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

    /// The checks after the chain: what the pinned root's certificate vouches for must be what authData says.
    func checkAttestedContents(
        of object: AppAttestAttestationObject, certifiedBy leaf: Certificate, clientDataHash: [UInt8], keyID expectedKeyID: [UInt8]?
    ) throws(AttestationFailure) -> AppAttestAttestation {
        let authData = object.authenticatorData
        guard let credential = authData.attestedCredential else {
            throw AttestationFailure(.malformed, "authData carries no attested credential")
        }

        let nonce = Array(SHA256.hash(data: authData.bytes + clientDataHash))
        guard try AppAttestNonceExtension.nonce(in: leaf) == nonce else {
            throw AttestationFailure(.nonceMismatch, "the certified nonce is not SHA-256(authData ‖ clientDataHash)")
        }

        guard let publicKey = P256.Signing.PublicKey(leaf.publicKey) else {
            throw AttestationFailure(.keyIdMismatch, "the credential certificate's key is not a P-256 key")
        }
        let keyID = Array(SHA256.hash(data: publicKey.x963Representation))
        if let expectedKeyID, expectedKeyID != keyID {
            throw AttestationFailure(.keyIdMismatch, "the key id sent is not SHA-256 of the certified key")
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

        guard credential.credentialID == keyID else {
            throw AttestationFailure(.keyIdMismatch, "authData's credential id is not the certified key's id")
        }
        guard let coseKey = COSEP256Key(credential.publicKey), coseKey.x963Representation == Array(publicKey.x963Representation) else {
            throw AttestationFailure(.keyIdMismatch, "authData's credential public key is not the certified P-256 key")
        }

        let jwk: JWK
        do {
            jwk = try JWK(subjectPublicKeyInfo: Array(publicKey.derRepresentation))
        } catch {
            throw AttestationFailure(.malformed, "the certified key does not read as a JWK: \(error)")
        }
        return AppAttestAttestation(
            keyID: keyID, publicKey: publicKey, jwk: jwk, counter: authData.counter, environment: environment,
            receipt: object.receipt, authenticatorDataTrailer: credential.trailer
        )
    }
}
