// Verifying the attestation statements Keyward accepts: `none`, `packed` (§8.2) and `apple` (§8.8).
import Crypto
import Foundation
import KeywardCBOR
import KeywardJOSE
import SwiftASN1
import X509

/// What a realm asks of a new passkey's attestation.
public enum WebAuthnAttestationPolicy: Sendable {
    /// Any of the accepted formats, verified as far as it goes; no chain is required to lead anywhere. The
    /// default: most passkeys (synced ones above all) come with `none`.
    case none
    /// A statement whose chain leads to a trusted root: `apple` to Apple's WebAuthn root, `packed` with a chain to
    /// one of `packedRoots` (an operator's authenticator makers). `none` and self attestation are refused.
    case direct(packedRoots: PinnedRoots?)
}

/// The attestation a registration came with, once verified.
public struct WebAuthnAttestationResult: Sendable, Hashable {
    /// `none`, `packed` or `apple`.
    public let format: String
    /// The statement's chain was verified to a trusted root.
    public let trusted: Bool

    public init(format: String, trusted: Bool) {
        self.format = format
        self.trusted = trusted
    }
}

enum WebAuthnAttestationStatement {
    static let maximumCertificates = 5
    /// id-fido-gen-ce-aaguid: the AAGUID a packed attestation certificate may name (§8.2.1).
    static let aaguidExtension: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 45724, 1, 1, 4]

    /// Verifies `object`'s statement for `key`, the credential it registers. Returns what it established.
    static func verify(
        _ object: WebAuthnAttestationObject, clientDataHash: [UInt8], key: COSECredentialKey, policy: WebAuthnAttestationPolicy,
        appleRoots: PinnedRoots, at time: Date
    ) async throws(WebAuthnFailure) -> WebAuthnAttestationResult {
        let signedData = object.authenticatorData.bytes + clientDataHash
        switch object.format {
        case "none":
            guard object.statement.mapEntries?.isEmpty == true else {
                throw WebAuthnFailure(.attestationInvalid, "a none attestation statement must be an empty map")
            }
            if case .direct = policy {
                throw WebAuthnFailure(.attestationUntrusted, "the realm asks for attestation, and the authenticator gave none")
            }
            return WebAuthnAttestationResult(format: "none", trusted: false)
        case "packed":
            return try await packed(object, signedData: signedData, key: key, policy: policy, at: time)
        case "apple":
            return try await apple(object, signedData: signedData, key: key, roots: appleRoots, at: time)
        default:
            throw WebAuthnFailure(
                .attestationFormatUnsupported, "attestation format \"\(CollectedClientData.shown(object.format))\" is not accepted: only none, packed and apple are"
            )
        }
    }

    /// §8.2: `{alg, sig, x5c?}`: with x5c the first certificate's key signs; without it the credential key itself
    /// does (self attestation).
    private static func packed(
        _ object: WebAuthnAttestationObject, signedData: [UInt8], key: COSECredentialKey, policy: WebAuthnAttestationPolicy, at time: Date
    ) async throws(WebAuthnFailure) -> WebAuthnAttestationResult {
        let statement = object.statement
        guard let algorithmValue = statement["alg"]?.integerValue else { throw WebAuthnFailure(.attestationInvalid, "attStmt has no integer alg") }
        guard let signature = statement["sig"]?.bytesValue else { throw WebAuthnFailure(.attestationInvalid, "attStmt has no sig byte string") }
        if statement["ecdaaKeyId"] != nil {
            throw WebAuthnFailure(.attestationFormatUnsupported, "ECDAA attestation is not accepted (it was removed from WebAuthn)")
        }
        guard let algorithm = COSECredentialKey.Algorithm(rawValue: algorithmValue) else {
            throw WebAuthnFailure(.attestationInvalid, "attStmt.alg \(algorithmValue) is not ES256, EdDSA or RS256")
        }
        guard let chainItems = statement["x5c"] else {
            guard algorithm == key.algorithm else {
                throw WebAuthnFailure(.attestationInvalid, "a self attestation's alg \(algorithmValue) is not the credential key's \(key.algorithm.rawValue)")
            }
            guard key.verify(signature: signature, over: signedData) else {
                throw WebAuthnFailure(.attestationInvalid, "the self attestation's signature does not verify with the credential key")
            }
            if case .direct = policy {
                throw WebAuthnFailure(.attestationUntrusted, "the realm asks for attestation, and a self attestation names no authenticator maker")
            }
            return WebAuthnAttestationResult(format: "packed", trusted: false)
        }
        let chain = try certificates(chainItems)
        let leaf = chain[0]
        let leafKey: JWK
        do {
            leafKey = try leaf.publicKey.jwk()
        } catch {
            throw WebAuthnFailure(.attestationInvalid, "the attestation certificate's key is not one Keyward reads: \(error.message)")
        }
        guard try COSECredentialKey(jwk: leafKey, algorithm: algorithm).verify(signature: signature, over: signedData) else {
            throw WebAuthnFailure(.attestationInvalid, "the packed attestation's signature does not verify with its certificate's key")
        }
        try checkPackedCertificate(leaf, aaguid: object.authenticatorData.attestedCredential?.aaguid ?? [])
        guard case .direct(let roots) = policy else { return WebAuthnAttestationResult(format: "packed", trusted: false) }
        guard let roots else {
            throw WebAuthnFailure(.attestationUntrusted, "the realm trusts no packed attestation roots (set webauthn attestation roots)")
        }
        try await verifyChain(chain, roots: roots, at: time)
        return WebAuthnAttestationResult(format: "packed", trusted: true)
    }

    /// §8.2.1: version 3, the subject's OU "Authenticator Attestation", not a CA, and an AAGUID extension, when
    /// there is one, that is not critical and names this authenticator's AAGUID.
    static func checkPackedCertificate(_ certificate: Certificate, aaguid: [UInt8]) throws(WebAuthnFailure) {
        guard certificate.version == .v3 else { throw WebAuthnFailure(.attestationInvalid, "the packed attestation certificate is not version 3") }
        let units = certificate.subject.flatMap { $0 }.filter { $0.type == .RDNAttributeType.organizationalUnitName }.map { String(describing: $0.value) }
        guard units.contains("Authenticator Attestation") else {
            throw WebAuthnFailure(.attestationInvalid, "the packed attestation certificate's subject OU is not \"Authenticator Attestation\"")
        }
        if let constraints = try? certificate.extensions.basicConstraints, case .isCertificateAuthority = constraints {
            throw WebAuthnFailure(.attestationInvalid, "the packed attestation certificate is a CA certificate")
        }
        if let found = certificate.extensions[oid: aaguidExtension] {
            guard !found.critical else { throw WebAuthnFailure(.attestationInvalid, "the certificate's AAGUID extension is marked critical") }
            let named = try? ASN1OctetString(derEncoded: found.value)
            guard let named, Array(named.bytes) == aaguid else {
                throw WebAuthnFailure(.attestationInvalid, "the certificate's AAGUID is not the authenticator data's")
            }
        }
    }

    /// §8.8: `{x5c}`: the first certificate certifies SHA-256(authData ‖ clientDataHash) in Apple's nonce extension
    /// and holds the credential's own key; the chain leads to Apple's WebAuthn root.
    private static func apple(
        _ object: WebAuthnAttestationObject, signedData: [UInt8], key: COSECredentialKey, roots: PinnedRoots, at time: Date
    ) async throws(WebAuthnFailure) -> WebAuthnAttestationResult {
        guard let chainItems = object.statement["x5c"] else { throw WebAuthnFailure(.attestationInvalid, "an apple attStmt has no x5c") }
        let chain = try certificates(chainItems)
        let leaf = chain[0]
        let nonce: [UInt8]
        do {
            nonce = try AppleNonceExtension.nonce(in: leaf)
        } catch {
            throw WebAuthnFailure(.attestationInvalid, error.detail)
        }
        guard nonce == Array(SHA256.hash(data: signedData)) else {
            throw WebAuthnFailure(.attestationInvalid, "the certified nonce is not SHA-256(authData ‖ clientDataHash)")
        }
        guard let leafKey = try? leaf.publicKey.jwk(), leafKey.material == key.jwk.material else {
            throw WebAuthnFailure(.attestationInvalid, "the apple attestation certificate does not hold the credential's key")
        }
        try await verifyChain(chain, roots: roots, at: time)
        return WebAuthnAttestationResult(format: "apple", trusted: true)
    }

    private static func certificates(_ items: CBORValue) throws(WebAuthnFailure) -> [Certificate] {
        guard let array = items.arrayValue, !array.isEmpty, array.count <= maximumCertificates else {
            throw WebAuthnFailure(.attestationInvalid, "attStmt.x5c is not an array of 1 to \(maximumCertificates) certificates")
        }
        var der: [[UInt8]] = []
        for item in array {
            guard let bytes = item.bytesValue else { throw WebAuthnFailure(.attestationInvalid, "an attStmt.x5c entry is not a byte string") }
            der.append(bytes)
        }
        do {
            return try CertificateInput.certificates(derEncoded: der)
        } catch {
            throw WebAuthnFailure(.attestationInvalid, error.detail)
        }
    }

    private static func verifyChain(_ chain: [Certificate], roots: PinnedRoots, at time: Date) async throws(WebAuthnFailure) {
        do {
            _ = try await roots.verify(chain: chain, at: time)
        } catch {
            throw WebAuthnFailure(.attestationUntrusted, error.detail)
        }
    }
}
