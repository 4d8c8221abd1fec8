// What a verified App Attest attestation or assertion gives the server to store, and the CLI's JSON report.
import Crypto
import Foundation
import KeywardCBOR
import KeywardJOSE

/// A verified App Attest attestation: what the server stores for the key (its id, the key, counter 0, the
/// environment, the receipt). Encodes as the JSON report `keyward attestation verify` prints:
/// `{"keyId", "publicKey" (JWK), "counter", "environment", "receipt"}`, byte strings in standard base64.
public struct AppAttestAttestation: Sendable, Encodable {
    /// SHA-256 of the key's uncompressed point: the id the app uses for the key.
    public let keyID: [UInt8]
    /// The attested P-256 key, to verify the app's assertions with (store its `x963Representation`).
    public let publicKey: P256.Signing.PublicKey
    /// The same key as a JWK.
    public let jwk: JWK
    /// The authData counter: 0 for an attestation.
    public let counter: UInt32
    public let environment: AppAttestEnvironment
    /// Apple's receipt, to store (and refresh with Apple for the risk metric); not verified here.
    public let receipt: [UInt8]
    /// The map that newer devices append to authData (bundle version, validation category), if any; read, not judged.
    public let authenticatorDataTrailer: CBORValue?

    private enum CodingKeys: String, CodingKey {
        case keyID = "keyId", publicKey, counter, environment, receipt
    }

    public var keyIDBase64: String { Data(keyID).base64EncodedString() }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(keyIDBase64, forKey: .keyID)
        try container.encode(jwk.requiredMembers.compactMapValues(\.stringValue), forKey: .publicKey)
        try container.encode(counter, forKey: .counter)
        try container.encode(environment, forKey: .environment)
        try container.encode(Data(receipt).base64EncodedString(), forKey: .receipt)
    }
}

/// A verified assertion: the counter the server stores in place of the previous one (with compare-and-set, so two
/// assertions racing with the same previous counter cannot both pass).
public struct AppAttestAssertion: Sendable, Encodable {
    public let counter: UInt32
    /// Bytes of authenticatorData after its 37-byte head (newer devices append a map there); covered by the signature.
    public let trailingByteCount: Int

    private enum CodingKeys: String, CodingKey {
        case counter
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(counter, forKey: .counter)
    }
}
