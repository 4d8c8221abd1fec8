/// Just enough DER to tell what a PKCS#8 PrivateKeyInfo holds, so the wrong kind of key gets a clear refusal:
///
///     PrivateKeyInfo ::= SEQUENCE { version INTEGER (0|1), privateKeyAlgorithm AlgorithmIdentifier, privateKey OCTET STRING, … }
///     AlgorithmIdentifier ::= SEQUENCE { algorithm OBJECT IDENTIFIER, parameters ANY OPTIONAL }
///
/// The key itself is parsed (and fully checked) by swift-crypto through KeywardJOSE's `SigningKey`.
enum PKCS8AlgorithmIdentifier {
    private static let rsaEncryption: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]  // 1.2.840.113549.1.1.1
    private static let ecPublicKey: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]  // 1.2.840.10045.2.1
    private static let prime256v1: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]  // 1.2.840.10045.3.1.7

    private static let notPKCS8 = PrivateKeyPEM.Problem(message: "the PEM body is not a PKCS#8 PrivateKeyInfo")

    static func keyType(der: [UInt8]) throws(PrivateKeyPEM.Problem) -> PrivateKeyPEM.KeyType {
        var outer = DERCursor(der[...])
        var info = try outer.element(tag: 0x30)
        guard outer.isAtEnd else { throw notPKCS8 }
        let version = try info.element(tag: 0x02)
        // v1 (0) or v2 (1, RFC 5958); a PKCS#1 or SEC1 key mislabelled as "PRIVATE KEY" fails the next read.
        guard version.bytes == [0x00] || version.bytes == [0x01] else { throw notPKCS8 }
        var algorithm = try info.element(tag: 0x30)
        let oid = try algorithm.element(tag: 0x06).bytes
        _ = try info.element(tag: 0x04)

        if oid.elementsEqual(rsaEncryption) { return .rsa }
        if oid.elementsEqual(ecPublicKey) {
            guard let curve = try? algorithm.element(tag: 0x06), curve.bytes.elementsEqual(prime256v1) else {
                throw PrivateKeyPEM.Problem(message: "EC key is not on curve P-256")
            }
            return .p256
        }
        throw PrivateKeyPEM.Problem(message: "PKCS#8 key algorithm is neither RSA nor EC")
    }

    /// Reads definite-length DER elements one after another.
    private struct DERCursor {
        var bytes: ArraySlice<UInt8>

        init(_ bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
        }

        var isAtEnd: Bool { bytes.isEmpty }

        /// The content of the next element, which must carry `tag`.
        mutating func element(tag: UInt8) throws(PrivateKeyPEM.Problem) -> DERCursor {
            guard let first = bytes.first, first == tag else { throw notPKCS8 }
            var index = bytes.index(after: bytes.startIndex)
            guard index < bytes.endIndex else { throw notPKCS8 }
            let lengthByte = bytes[index]
            index += 1
            var length = 0
            if lengthByte < 0x80 {
                length = Int(lengthByte)
            } else {
                let count = Int(lengthByte & 0x7F)
                // Keys are a few KiB at most: more than 3 length bytes (or indefinite length, 0x80) is not a key.
                guard count >= 1, count <= 3, bytes.endIndex - index >= count else { throw notPKCS8 }
                for _ in 0..<count {
                    length = length << 8 | Int(bytes[index])
                    index += 1
                }
            }
            guard bytes.endIndex - index >= length else { throw notPKCS8 }
            let content = bytes[index..<(index + length)]
            bytes = bytes[(index + length)...]
            return DERCursor(content)
        }
    }
}
