// Reading a registration's attestation object (Web Authentication Level 3 §6.5.4): fmt, attStmt, authData.
import KeywardCBOR

/// `{fmt: text, attStmt: map, authData: bytes}`, read but not yet verified. Other members are ignored: the object is
/// not signed as a whole, only what its statement covers.
public struct WebAuthnAttestationObject: Sendable {
    /// Room for a statement with a certificate chain of a few certificates; a bound on what is parsed.
    public static let maximumLength = 16 * 1024

    public let format: String
    public let statement: CBORValue
    public let authenticatorData: WebAuthnAuthenticatorData

    public init(_ bytes: [UInt8]) throws(WebAuthnFailure) {
        guard bytes.count <= Self.maximumLength else {
            throw WebAuthnFailure(.malformed, "the attestation object has \(bytes.count) bytes, more than \(Self.maximumLength)")
        }
        let object: CBORValue
        do throws(CBORError) {
            object = try CBORReader.decode(bytes, maximumDepth: 4)
        } catch {
            throw WebAuthnFailure(.malformed, "the attestation object is not CBOR: \(error)")
        }
        guard object.mapEntries != nil else { throw WebAuthnFailure(.malformed, "the attestation object is not a CBOR map") }
        guard let format = object["fmt"]?.textValue else { throw WebAuthnFailure(.malformed, "the attestation object has no text fmt") }
        guard let statement = object["attStmt"], statement.mapEntries != nil else {
            throw WebAuthnFailure(.malformed, "the attestation object has no attStmt map")
        }
        guard let authData = object["authData"]?.bytesValue else {
            throw WebAuthnFailure(.malformed, "the attestation object has no authData byte string")
        }
        let authenticatorData = try WebAuthnAuthenticatorData(authData)
        guard authenticatorData.attestedCredential != nil else {
            throw WebAuthnFailure(.malformed, "a registration's authenticator data carries no attested credential (AT is clear)")
        }
        self.format = format
        self.statement = statement
        self.authenticatorData = authenticatorData
    }
}
