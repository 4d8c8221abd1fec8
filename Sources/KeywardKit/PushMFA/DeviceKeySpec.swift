// Which device key a push-MFA device asks its key store for, and its public JWK as the API wants it.
import KeywardJOSE

/// The device key to ask a `KeyStore` for: RSA-2048 with RS256/384/512, or EC P-256/P-384/P-521 with the one matching
/// ES algorithm (the only algorithms the push-MFA API accepts). Defaults to RSA/RS256 like the original's demo clients.
public struct DeviceKeySpec: Sendable, Equatable {
    /// The JWS algorithm; the key type and curve follow from it.
    public let algorithm: JWSAlgorithm

    /// A spec for `algorithm`; throws ``KeywardKitError/invalidOption(_:_:)`` for one the push-MFA API refuses
    /// (PS*, EdDSA).
    public init(algorithm: JWSAlgorithm) throws {
        guard [.rs256, .rs384, .rs512, .es256, .es384, .es512].contains(algorithm) else {
            throw KeywardKitError.invalidOption("alg", "\(algorithm.rawValue) is not accepted by the push-MFA API (RS256, RS384, RS512, ES256, ES384, ES512)")
        }
        self.algorithm = algorithm
    }

    /// From `--key-type` / `--curve` / `--alg` (or DEVICE_KEY_TYPE / DEVICE_EC_CURVE / DEVICE_SIGNING_ALG).
    public init(keyType: String?, curve: String?, alg: String?) throws {
        let type = (keyType ?? (curve != nil || alg?.uppercased().hasPrefix("ES") == true ? "EC" : "RSA")).uppercased()
        switch type {
        case "RSA":
            if let curve { throw KeywardKitError.invalidOption("curve", "'\(curve)' makes no sense for an RSA key") }
            let name = (alg ?? "RS256").uppercased()
            guard let algorithm = JWSAlgorithm(rawValue: name), [.rs256, .rs384, .rs512].contains(algorithm) else {
                throw KeywardKitError.invalidOption("alg", "'\(name)' does not fit an RSA key (RS256, RS384, RS512)")
            }
            try self.init(algorithm: algorithm)
        case "EC":
            let byCurve: [String: JWSAlgorithm] = ["P-256": .es256, "P-384": .es384, "P-521": .es512]
            let curveAlgorithm = try curve.map { name -> JWSAlgorithm in
                guard let algorithm = byCurve[name.uppercased()] else {
                    throw KeywardKitError.invalidOption("curve", "'\(name)' is not P-256, P-384 or P-521")
                }
                return algorithm
            }
            let algAlgorithm = try alg.map { name -> JWSAlgorithm in
                guard let algorithm = JWSAlgorithm(rawValue: name.uppercased()), byCurve.values.contains(algorithm) else {
                    throw KeywardKitError.invalidOption("alg", "'\(name)' does not fit an EC key (ES256, ES384, ES512)")
                }
                return algorithm
            }
            if let curveAlgorithm, let algAlgorithm, curveAlgorithm != algAlgorithm {
                throw KeywardKitError.invalidOption("alg", "\(algAlgorithm.rawValue) does not go with curve \(curve ?? "")")
            }
            try self.init(algorithm: curveAlgorithm ?? algAlgorithm ?? .es256)
        default:
            throw KeywardKitError.invalidOption("key-type", "'\(type)' is not RSA or EC")
        }
    }

    /// The public JWK as the push-MFA API wants it: public members plus `alg`, `use: sig` and `kid` (the thumbprint).
    public static func publicJWK(of key: some JWSSigner) -> JSONObject {
        let publicJWK = key.publicJWK
        var jwk = publicJWK.requiredMembers
        jwk["alg"] = .string(key.algorithm.rawValue)
        jwk["use"] = "sig"
        jwk["kid"] = .string(publicJWK.thumbprint())
        return jwk
    }
}
