// Reading App Attest authenticator data: the head, and in an attestation the attested credential.
import KeywardCBOR

/// Authenticator data as App Attest writes it (WebAuthn's layout): rpIdHash[32] | flags[1] | counter[4, big-endian],
/// then in an attestation the attested credential: aaguid[16] | credentialIdLength[2, big-endian] |
/// credentialId | COSE key (CBOR) | since 2026 a CBOR map (bundle version, validation category).
///
/// Nothing assumes a length: the bytes are kept whole (they are what the nonce and the assertion signature cover),
/// the attested credential is read item by item, and an assertion's bytes after the 37-byte head, which newer iOS
/// versions fill with that same map, are left unread.
public struct AppAttestAuthenticatorData: Sendable {
    /// The credential an attestation carries.
    public struct AttestedCredential: Sendable {
        public let aaguid: [UInt8]
        public let credentialID: [UInt8]
        /// The COSE_Key map (RFC 9052 §7) of the attested key.
        public let publicKey: CBORValue
        /// The map Apple appends after the key on newer devices, if there is one.
        public let trailer: CBORValue?
    }

    static let headLength = 37

    /// The bytes as received.
    public let bytes: [UInt8]
    /// SHA-256 of the App ID the key belongs to.
    public let rpIDHash: [UInt8]
    public let flags: UInt8
    public let counter: UInt32
    /// Read in attestations only.
    public let attestedCredential: AttestedCredential?

    /// An assertion's authenticator data: the head is read, the rest left as it is.
    public init(assertionBytes bytes: [UInt8]) throws(AttestationFailure) {
        guard bytes.count >= Self.headLength else {
            throw AttestationFailure(.malformed, "authenticatorData has \(bytes.count) bytes, fewer than the \(Self.headLength) of its head")
        }
        self.bytes = bytes
        rpIDHash = Array(bytes[0..<32])
        flags = bytes[32]
        counter = Self.bigEndian(bytes[33..<37])
        attestedCredential = nil
    }

    /// An attestation's authData: the head, then the attested credential, whose key must be a CBOR map followed
    /// by nothing or by one more map.
    public init(attestationBytes bytes: [UInt8]) throws(AttestationFailure) {
        let head = try AppAttestAuthenticatorData(assertionBytes: bytes)
        let credentialStart = Self.headLength + 18
        guard bytes.count >= credentialStart else {
            throw AttestationFailure(.malformed, "authData has \(bytes.count) bytes, too few for an attested credential")
        }
        let credentialIDLength = Int(Self.bigEndian(bytes[(Self.headLength + 16)..<credentialStart]))
        guard credentialIDLength <= bytes.count - credentialStart else {
            throw AttestationFailure(.malformed, "authData's credential id length \(credentialIDLength) runs past its end")
        }
        let keyStart = credentialStart + credentialIDLength
        var reader = CBORReader(Array(bytes[keyStart...]))
        let publicKey: CBORValue, trailer: CBORValue?
        do throws(CBORError) {
            publicKey = try reader.read()
            trailer = reader.isAtEnd ? nil : try reader.read()
        } catch {
            throw AttestationFailure(.malformed, "authData after the credential id is not CBOR: \(error.kind.rawValue) at byte \(keyStart + error.offset)")
        }
        guard publicKey.mapEntries != nil else {
            throw AttestationFailure(.malformed, "authData's credential public key is not a COSE key map")
        }
        if let trailer, trailer.mapEntries == nil {
            throw AttestationFailure(.malformed, "authData's item after the credential public key is not a map")
        }
        guard reader.isAtEnd else {
            throw AttestationFailure(.malformed, "authData has \(reader.remainingCount) bytes after the credential public key and its trailing map")
        }
        self.bytes = bytes
        rpIDHash = head.rpIDHash
        flags = head.flags
        counter = head.counter
        attestedCredential = AttestedCredential(
            aaguid: Array(bytes[Self.headLength..<(Self.headLength + 16)]),
            credentialID: Array(bytes[credentialStart..<keyStart]),
            publicKey: publicKey,
            trailer: trailer
        )
    }

    private static func bigEndian(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }
}
