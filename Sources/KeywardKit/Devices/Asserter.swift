/// Makes App Attest assertions with a key the platform attested at registration: how a device registered through
/// App Attest signs its requests (`X-Keyward-Sig-Version: appattest-1`).
///
/// An assertion is the CBOR map `{signature, authenticatorData}` that `DCAppAttestService.generateAssertion` returns:
/// the App Attest key's signature over SHA-256(authenticatorData ‖ clientDataHash), with a counter in
/// authenticatorData that grows with every assertion. The server checks it with the public key of the attestation
/// it accepted, and refuses a counter that does not exceed the last one it saw.
///
/// ``AppAttestAttester`` (Apple platforms) is both the ``Attester`` that makes the key and its `Asserter`; a
/// ``DeviceRegistrar`` whose attester is also an `Asserter` signs with assertions once the server has taken the
/// attestation.
public protocol Asserter: Sendable {
    /// An assertion by the App Attest key `keyId` (the `keyId` its attestation carried) over `clientDataHash`, the
    /// SHA-256 of the client data (32 bytes).
    func assertion(keyId: String, clientDataHash: [UInt8]) async throws -> [UInt8]
}
