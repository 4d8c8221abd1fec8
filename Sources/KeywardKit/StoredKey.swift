// A stored device key as one small JSON object, the same in a key file and a Keychain item.
import KeywardJOSE

/// A stored key as one small JSON object, the same in a key file and in a Keychain item:
/// `{"alg":"ES256","key":"<base64url>"}` for a software key, exactly what `FileKeyStore` has always written, so old
/// state directories still load. A Secure Enclave key adds `"storage":"secure-enclave"`, and then `key` is the
/// enclave's encrypted handle, which is useless anywhere but in the enclave that made it.
struct StoredKey: Equatable {
    enum Storage: String {
        case software
        case secureEnclave = "secure-enclave"
    }

    let algorithm: JWSAlgorithm
    let storage: Storage
    let bytes: [UInt8]

    init(algorithm: JWSAlgorithm, storage: Storage, bytes: [UInt8]) {
        self.algorithm = algorithm
        self.storage = storage
        self.bytes = bytes
    }

    init(software key: SigningKey) {
        self.init(algorithm: key.algorithm, storage: .software, bytes: key.serialized)
    }

    /// Nil for anything that is not a stored key; the store reports it with the file or item it came from.
    init?(json: [UInt8]) {
        guard let object = try? StrictJSON.parseObject(json),
            let algorithmName = object["alg"]?.stringValue, let algorithm = JWSAlgorithm(rawValue: algorithmName),
            let encoded = object["key"]?.stringValue, let bytes = try? Base64URL.decode(encoded)
        else { return nil }
        var storage = Storage.software
        if let value = object["storage"] {
            guard let name = value.stringValue, let named = Storage(rawValue: name) else { return nil }
            storage = named
        }
        // The enclave only makes P-256 keys; any other pairing was not written by us.
        if storage == .secureEnclave, algorithm != .es256 { return nil }
        self.init(algorithm: algorithm, storage: storage, bytes: bytes)
    }

    var json: [UInt8] {
        var object: JSONObject = ["alg": .string(algorithm.rawValue), "key": .string(Base64URL.encode(bytes))]
        // Software keys stay in the original two-member format.
        if storage != .software { object["storage"] = .string(storage.rawValue) }
        return StrictJSON.serialize(object)
    }

    /// The software key this record holds.
    func softwareKey() throws -> SigningKey {
        try SigningKey(algorithm: algorithm, serialized: bytes)
    }
}
