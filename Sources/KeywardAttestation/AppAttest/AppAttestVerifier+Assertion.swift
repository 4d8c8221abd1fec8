// Verifying an App Attest assertion made with a key the app attested before, counter included.
import Crypto
import Foundation
import KeywardCBOR

extension AppAttestVerifier {
    /// Verifies an assertion (`DCAppAttestService.generateAssertion`) made with a key this app attested before.
    ///
    /// - Parameters:
    ///   - assertion: the CBOR bytes `{signature, authenticatorData}` the app sent.
    ///   - clientData: what the app signed (or its SHA-256); checking the challenge inside it is the caller's part.
    ///   - publicKey: the key stored from the attestation.
    ///   - previousCounter: the counter stored for the key; the assertion's must be greater.
    /// - Returns: the new counter, for the caller to store in place of `previousCounter` (compare-and-set).
    public func verifyAssertion(
        _ assertion: [UInt8], clientData: AppAttestClientData, publicKey: P256.Signing.PublicKey, previousCounter: UInt32
    ) throws(AttestationFailure) -> AppAttestAssertion {
        let object: CBORValue
        do throws(CBORError) {
            object = try CBORReader.decode(assertion)
        } catch {
            throw AttestationFailure(.malformed, "the assertion is not CBOR: \(error)")
        }
        guard object.mapEntries != nil, let signatureDER = object["signature"]?.bytesValue,
            let authenticatorBytes = object["authenticatorData"]?.bytesValue
        else {
            throw AttestationFailure(.malformed, "the assertion is not a map with signature and authenticatorData byte strings")
        }
        let authData = try AppAttestAuthenticatorData(assertionBytes: authenticatorBytes)
        let clientDataHash = try clientData.clientDataHash()
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try P256.Signing.ECDSASignature(derRepresentation: signatureDER)
        } catch {
            throw AttestationFailure(.malformed, "the assertion signature is not a DER ECDSA signature")
        }

        // The plain fields first: an assertion for another app or with a spent counter costs no ECDSA verification.
        guard authData.rpIDHash == rpIDHash else {
            throw AttestationFailure(.rpIdMismatch, "authenticatorData's rpIdHash is not SHA-256 of \(appID)")
        }
        guard authData.counter > previousCounter else {
            throw AttestationFailure(.counterNotIncreasing, "the assertion counter \(authData.counter) does not exceed the stored \(previousCounter)")
        }

        // The app's key signed SHA-256(nonce): the nonce is the message, hashed once more by the Data overload.
        // Passing it as a Digest would verify a signature over the nonce itself, which real devices never make.
        let nonce = Data(SHA256.hash(data: authData.bytes + clientDataHash))
        guard publicKey.isValidSignature(signature, for: nonce) else {
            throw AttestationFailure(.signatureInvalid, "the assertion signature does not verify with the stored key")
        }
        return AppAttestAssertion(counter: authData.counter, trailingByteCount: authData.bytes.count - AppAttestAuthenticatorData.headLength)
    }
}
