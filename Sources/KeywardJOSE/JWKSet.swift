/// A JSON Web Key Set (RFC 7517 §5) of usable public signature keys.
public struct JWKSet: Sendable {
    public var keys: [JWK]

    public init(keys: [JWK]) {
        self.keys = keys
    }

    /// Entries we cannot use (symmetric, private, weak, unknown kty/crv/alg, encryption-only) are skipped:
    /// a provider publishing one exotic key must not take all its other keys down with it.
    public init(json: some Collection<UInt8>) throws(JOSEError) {
        let document = try StrictJSON.parseObject(json)
        guard let entries = document["keys"]?.arrayValue else {
            throw JOSEError(.malformed, "JWK Set has no \"keys\" array")
        }
        var keys: [JWK] = []
        keys.reserveCapacity(entries.count)
        for entry in entries {
            guard let object = entry.objectValue, let key = try? JWK(json: object) else { continue }
            if let use = key.use, use != "sig" { continue }
            if let ops = object["key_ops"]?.arrayValue, !ops.contains(.string("verify")) { continue }
            keys.append(key)
        }
        self.keys = keys
    }

    /// Exact match only: an unknown kid never falls back to some other key.
    public func key(withID kid: String) -> JWK? {
        keys.first { $0.kid == kid }
    }

    public func keys(withID kid: String) -> [JWK] {
        keys.filter { $0.kid == kid }
    }

    public var jsonObject: JSONObject {
        ["keys": .array(keys.map { .object($0.jsonObject) })]
    }
}
