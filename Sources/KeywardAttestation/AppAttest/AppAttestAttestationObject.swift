// Reading the App Attest attestation object (format, certificate chain, receipt, authData) before verifying it.
import KeywardCBOR
import X509

/// The attestation object `DCAppAttestService.attestKey` returns, read but not yet verified:
/// `{fmt: "apple-appattest", attStmt: {x5c: [credential certificate, intermediate...], receipt}, authData}`.
/// Other top-level or attStmt members are ignored: the object itself is not signed, only what it carries is.
public struct AppAttestAttestationObject: Sendable {
    static let format = "apple-appattest"
    /// Apple sends two; a few more leave room for a longer chain without letting a client hand the chain builder
    /// an unbounded pile of intermediates.
    static let maximumCertificates = 5

    /// The x5c certificates, the credential certificate first.
    public let certificates: [Certificate]
    /// The x5c certificates as DER, as received.
    public let certificatesDER: [[UInt8]]
    /// Apple's receipt (PKCS#7), kept for the server to store or refresh; not verified here.
    public let receipt: [UInt8]
    public let authenticatorData: AppAttestAuthenticatorData

    public init(cbor bytes: [UInt8]) throws(AttestationFailure) {
        let object: CBORValue
        do throws(CBORError) {
            object = try CBORReader.decode(bytes)
        } catch {
            throw AttestationFailure(.malformed, "the attestation object is not CBOR: \(error)")
        }
        guard object.mapEntries != nil else { throw AttestationFailure(.malformed, "the attestation object is not a CBOR map") }
        guard let format = object["fmt"] else { throw AttestationFailure(.malformed, "the attestation object has no fmt") }
        guard format.textValue == Self.format else {
            throw AttestationFailure(.malformed, "the attestation format is not \(Self.format)")
        }
        guard let statement = object["attStmt"], statement.mapEntries != nil else {
            throw AttestationFailure(.malformed, "the attestation object has no attStmt map")
        }
        guard let chain = statement["x5c"]?.arrayValue else { throw AttestationFailure(.malformed, "attStmt has no x5c array") }
        guard !chain.isEmpty, chain.count <= Self.maximumCertificates else {
            throw AttestationFailure(.malformed, "attStmt.x5c has \(chain.count) certificates, not 1 to \(Self.maximumCertificates)")
        }
        var certificatesDER: [[UInt8]] = []
        for item in chain {
            guard let der = item.bytesValue else { throw AttestationFailure(.malformed, "an attStmt.x5c entry is not a byte string") }
            certificatesDER.append(der)
        }
        guard let receipt = statement["receipt"]?.bytesValue else {
            throw AttestationFailure(.malformed, "attStmt has no receipt byte string")
        }
        guard let authData = object["authData"]?.bytesValue else {
            throw AttestationFailure(.malformed, "the attestation object has no authData byte string")
        }
        self.authenticatorData = try AppAttestAuthenticatorData(attestationBytes: authData)
        self.certificates = try CertificateInput.certificates(derEncoded: certificatesDER)
        self.certificatesDER = certificatesDER
        self.receipt = receipt
    }
}
