/// The asymmetric JWS algorithms KeywardJOSE implements. There is deliberately no `none` and no HS*:
/// a symmetric algorithm next to public keys is the classic algorithm-confusion hole.
public enum JWSAlgorithm: String, Sendable, CaseIterable, Hashable {
    case es256 = "ES256"
    case es384 = "ES384"
    case es512 = "ES512"
    case rs256 = "RS256"
    case rs384 = "RS384"
    case rs512 = "RS512"
    case ps256 = "PS256"
    case edDSA = "EdDSA"

    var isRSA: Bool {
        switch self {
        case .rs256, .rs384, .rs512, .ps256: true
        default: false
        }
    }

    /// The JWK `crv` this algorithm needs, nil for RSA.
    var curve: String? {
        switch self {
        case .es256: "P-256"
        case .es384: "P-384"
        case .es512: "P-521"
        case .edDSA: "Ed25519"
        default: nil
        }
    }
}
