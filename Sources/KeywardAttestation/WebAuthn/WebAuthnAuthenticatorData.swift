// Reading WebAuthn authenticator data (Web Authentication Level 3 §6.1): the head, the attested credential, the
// extensions, and nothing after them.
import KeywardCBOR

/// Authenticator data: rpIdHash[32] | flags[1] | signCount[4, big-endian], then the attested credential data when
/// flag AT is set (aaguid[16] | credentialIdLength[2] | credentialId | credentialPublicKey as CBOR), then the
/// extension outputs (a CBOR map) when flag ED is set.
///
/// Strict: each flag and what follows the head must agree, and no byte may follow the last item the flags announce.
/// The bytes are kept whole: signatures cover them as received.
public struct WebAuthnAuthenticatorData: Sendable {
    /// The flags byte (§6.1, Table "Authenticator Data Flags").
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let userPresent = Flags(rawValue: 0x01)
        public static let userVerified = Flags(rawValue: 0x04)
        /// The credential may be backed up (synced) — fixed for the credential's life.
        public static let backupEligible = Flags(rawValue: 0x08)
        /// The credential is backed up now.
        public static let backupState = Flags(rawValue: 0x10)
        public static let attestedCredentialData = Flags(rawValue: 0x40)
        public static let extensionData = Flags(rawValue: 0x80)
    }

    /// A new credential, as a registration's authenticator data carries it.
    public struct AttestedCredential: Sendable {
        public let aaguid: [UInt8]
        public let credentialID: [UInt8]
        /// The COSE_Key (RFC 9052 §7), read.
        public let publicKey: CBORValue
        /// The same key as the bytes received, which is what a relying party stores (§7.1 step 27).
        public let publicKeyBytes: [UInt8]
    }

    static let headLength = 37
    /// §5.1: a credential id is at most 1023 bytes.
    public static let maximumCredentialIDLength = 1023

    public let bytes: [UInt8]
    public let rpIDHash: [UInt8]
    public let flags: Flags
    public let signCount: UInt32
    public let attestedCredential: AttestedCredential?
    /// The extension outputs map, when flag ED is set; read, not judged.
    public let extensions: CBORValue?

    public init(_ bytes: [UInt8]) throws(WebAuthnFailure) {
        guard bytes.count >= Self.headLength else {
            throw WebAuthnFailure(.malformed, "authenticator data has \(bytes.count) bytes, fewer than the \(Self.headLength) of its head")
        }
        let flags = Flags(rawValue: bytes[32])
        // §6.1: BS may be set only for a credential that is backup eligible.
        if flags.contains(.backupState), !flags.contains(.backupEligible) {
            throw WebAuthnFailure(.malformed, "authenticator data says backed up (BS) for a credential that is not backup eligible (BE)")
        }
        var offset = Self.headLength
        var attested: AttestedCredential?
        if flags.contains(.attestedCredentialData) {
            let idStart = offset + 18
            guard bytes.count >= idStart else {
                throw WebAuthnFailure(.malformed, "authenticator data sets AT but has \(bytes.count) bytes, too few for attested credential data")
            }
            let idLength = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            guard idLength >= 1, idLength <= Self.maximumCredentialIDLength else {
                throw WebAuthnFailure(.malformed, "the credential id length is \(idLength), not 1 to \(Self.maximumCredentialIDLength)")
            }
            guard idLength <= bytes.count - idStart else {
                throw WebAuthnFailure(.malformed, "the credential id length \(idLength) runs past the end of the authenticator data")
            }
            let keyStart = idStart + idLength
            var reader = CBORReader(Array(bytes[keyStart...]), maximumDepth: 4)
            let key: CBORValue
            do throws(CBORError) {
                key = try reader.read()
            } catch {
                throw WebAuthnFailure(.malformed, "the credential public key is not CBOR: \(error.kind.rawValue) at byte \(keyStart + error.offset)")
            }
            guard key.mapEntries != nil else { throw WebAuthnFailure(.malformed, "the credential public key is not a COSE key map") }
            offset = keyStart + reader.offset
            attested = AttestedCredential(
                aaguid: Array(bytes[(Self.headLength)..<(Self.headLength + 16)]), credentialID: Array(bytes[idStart..<keyStart]),
                publicKey: key, publicKeyBytes: Array(bytes[keyStart..<offset])
            )
        }
        var extensions: CBORValue?
        if flags.contains(.extensionData) {
            var reader = CBORReader(Array(bytes[offset...]), maximumDepth: 8)
            do throws(CBORError) {
                extensions = try reader.read()
            } catch {
                throw WebAuthnFailure(.malformed, "the extension outputs are not CBOR: \(error.kind.rawValue) at byte \(offset + error.offset)")
            }
            guard extensions?.mapEntries != nil else { throw WebAuthnFailure(.malformed, "the extension outputs are not a CBOR map") }
            offset += reader.offset
        }
        guard offset == bytes.count else {
            throw WebAuthnFailure(.malformed, "authenticator data has \(bytes.count - offset) bytes after what its flags announce")
        }
        self.bytes = bytes
        self.rpIDHash = Array(bytes[0..<32])
        self.flags = flags
        self.signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        self.attestedCredential = attested
        self.extensions = extensions
    }
}
