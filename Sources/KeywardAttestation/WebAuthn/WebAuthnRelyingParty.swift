// Verifying passkey registrations and assertions for one relying party (Web Authentication Level 3 §7.1, §7.2),
// cheapest checks first.
import Crypto
import Foundation

/// One relying party's WebAuthn checks: its RP ID and the origins it accepts ceremonies from.
///
/// Pure: the response's bytes, what the relying party stored or issued (the challenge, the credential's key and
/// counter) and an explicit time in, a verdict out. What needs storage — that the challenge is spent once, that the
/// credential exists and belongs to the user — is the caller's.
///
/// The steps run cheapest first: the client data and the authenticator data's plain fields are judged before any
/// signature or certificate chain, so a response already wrong in a plain field costs no public-key operation.
public struct WebAuthnRelyingParty: Sendable {
    public let rpID: String
    /// Exact origins (`https://example.com`, `android:apk-key-hash:…`), compared as strings.
    public let origins: Set<String>
    /// Ceremonies run in a cross-origin frame are refused unless this is set.
    public let allowCrossOrigin: Bool
    public let rpIDHash: [UInt8]

    public init(rpID: String, origins: Set<String>, allowCrossOrigin: Bool = false) {
        self.rpID = rpID
        self.origins = origins
        self.allowCrossOrigin = allowCrossOrigin
        self.rpIDHash = Array(SHA256.hash(data: Array(rpID.utf8)))
    }

    /// A new passkey, verified.
    public struct Registration: Sendable {
        public let credentialID: [UInt8]
        /// The COSE_Key as received: what to store and verify later assertions with (`COSECredentialKey(bytes:)`).
        public let publicKeyBytes: [UInt8]
        public let key: COSECredentialKey
        public let signCount: UInt32
        public let aaguid: [UInt8]
        public let flags: WebAuthnAuthenticatorData.Flags
        public let attestation: WebAuthnAttestationResult

        public var userVerified: Bool { flags.contains(.userVerified) }
        public var backupEligible: Bool { flags.contains(.backupEligible) }
        public var backedUp: Bool { flags.contains(.backupState) }
    }

    /// A sign-in with a stored passkey, verified.
    public struct Assertion: Sendable {
        /// The counter to store from now on.
        public let signCount: UInt32
        public let flags: WebAuthnAuthenticatorData.Flags

        public var userVerified: Bool { flags.contains(.userVerified) }
        public var backedUp: Bool { flags.contains(.backupState) }
    }

    /// §7.1. `challenge`: the bytes this ceremony's options carried.
    public func verifyRegistration(
        clientDataJSON: [UInt8], attestationObject: [UInt8], challenge: [UInt8], requireUserVerification: Bool,
        attestation policy: WebAuthnAttestationPolicy = .none, appleRoots: PinnedRoots = .appleWebAuthn, at time: Date
    ) async throws(WebAuthnFailure) -> Registration {
        let clientData = try CollectedClientData(clientDataJSON)
        try clientData.check(ceremony: .create, challenge: challenge, origins: origins, allowCrossOrigin: allowCrossOrigin)
        let object = try WebAuthnAttestationObject(attestationObject)
        let authData = object.authenticatorData
        try checkFlags(of: authData, requireUserVerification: requireUserVerification)
        guard let credential = authData.attestedCredential else {
            throw WebAuthnFailure(.malformed, "a registration's authenticator data carries no attested credential")
        }
        // Read from the bytes, as it will be read when stored: a key the stored-key reader refuses never registers.
        let key = try COSECredentialKey(bytes: credential.publicKeyBytes)
        let result = try await WebAuthnAttestationStatement.verify(
            object, clientDataHash: clientData.hash, key: key, policy: policy, appleRoots: appleRoots, at: time
        )
        return Registration(
            credentialID: credential.credentialID, publicKeyBytes: credential.publicKeyBytes, key: key, signCount: authData.signCount,
            aaguid: credential.aaguid, flags: authData.flags, attestation: result
        )
    }

    /// What the relying party stored for the credential an assertion names.
    public struct StoredCredential: Sendable {
        public let key: COSECredentialKey
        public let signCount: UInt32
        public let backupEligible: Bool

        public init(key: COSECredentialKey, signCount: UInt32, backupEligible: Bool) {
            self.key = key
            self.signCount = signCount
            self.backupEligible = backupEligible
        }
    }

    /// §7.2. The caller has found `credential` by the assertion's id and checked that it belongs to the user the
    /// ceremony is for (`userHandle`).
    public func verifyAssertion(
        clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], challenge: [UInt8], credential: StoredCredential,
        requireUserVerification: Bool
    ) throws(WebAuthnFailure) -> Assertion {
        let clientData = try CollectedClientData(clientDataJSON)
        try clientData.check(ceremony: .get, challenge: challenge, origins: origins, allowCrossOrigin: allowCrossOrigin)
        let authData = try WebAuthnAuthenticatorData(authenticatorData)
        try checkFlags(of: authData, requireUserVerification: requireUserVerification)
        // Level 3 §7.2 step 18: backup eligibility is fixed when the credential is made.
        guard authData.flags.contains(.backupEligible) == credential.backupEligible else {
            throw WebAuthnFailure(.malformed, "the authenticator data says the credential's backup eligibility changed, which it never does")
        }
        guard credential.key.verify(signature: signature, over: authData.bytes + clientData.hash) else {
            throw WebAuthnFailure(.signatureInvalid, "the assertion's signature does not verify with the stored credential key")
        }
        // §6.1.1: a counter that is used must grow; one that does not is a sign of a cloned authenticator.
        if authData.signCount != 0 || credential.signCount != 0, authData.signCount <= credential.signCount {
            throw WebAuthnFailure(
                .counterNotIncreasing, "the signature counter is \(authData.signCount), not above the stored \(credential.signCount): the credential may be cloned"
            )
        }
        return Assertion(signCount: authData.signCount, flags: authData.flags)
    }

    /// The rpIdHash, then user presence and, when required, user verification.
    private func checkFlags(of authData: WebAuthnAuthenticatorData, requireUserVerification: Bool) throws(WebAuthnFailure) {
        guard authData.rpIDHash == rpIDHash else {
            throw WebAuthnFailure(.rpIDMismatch, "the authenticator data's rpIdHash is not SHA-256 of \"\(rpID)\"")
        }
        guard authData.flags.contains(.userPresent) else { throw WebAuthnFailure(.userNotPresent, "the user-present flag (UP) is clear") }
        if requireUserVerification, !authData.flags.contains(.userVerified) {
            throw WebAuthnFailure(.userNotVerified, "the realm requires user verification and the user-verified flag (UV) is clear")
        }
    }
}
