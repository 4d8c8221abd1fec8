// Test support: fresh FCM service-account JSON and APNs .p8 key files, as Google and Apple hand them out.
import Foundation
import KeywardJOSE

/// Key files as Google and Apple hand them out, made fresh for each test: a service-account JSON with a PKCS#8 RSA
/// key, and a .p8 (PKCS#8 P-256). Only KeywardJOSE is used, so these tests need no extra dependency.
enum PushTestKeys {
    struct ServiceAccount {
        let path: String
        let key: SigningKey
        let clientEmail: String
        let privateKeyId: String
        let tokenURI: String
    }

    static func writeServiceAccount(in directory: URL, tokenURI: String, privateKeyId: String = "test-key-1") throws -> ServiceAccount {
        let key = try SigningKey.generate(.rs256)
        let clientEmail = "keyward-push@keyward-test.iam.gserviceaccount.com"
        let json: [String: String] = [
            "type": "service_account",
            "project_id": "keyward-test",
            "private_key_id": privateKeyId,
            "private_key": pem(label: "PRIVATE KEY", der: pkcs8(rsaPKCS1: key.serialized)),
            "client_email": clientEmail,
            "client_id": "100000000000000000001",
            "token_uri": tokenURI,
        ]
        let path = directory.appendingPathComponent("service-account-\(UUID().uuidString).json").path
        try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]).write(to: URL(fileURLWithPath: path))
        return ServiceAccount(path: path, key: key, clientEmail: clientEmail, privateKeyId: privateKeyId, tokenURI: tokenURI)
    }

    /// A service-account JSON made of the given members (to break one at a time).
    static func writeJSON(_ object: [String: String], in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("json-\(UUID().uuidString).json").path
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// An Apple .p8 file: swift-crypto's P-256 DER is already PKCS#8.
    static func writeP8(in directory: URL) throws -> (path: String, key: SigningKey) {
        let key = try SigningKey.generate(.es256)
        return (try write(pem(label: "PRIVATE KEY", der: key.serialized), in: directory, suffix: ".p8"), key)
    }

    static func write(_ text: String, in directory: URL, suffix: String) throws -> String {
        let path = directory.appendingPathComponent("file-\(UUID().uuidString)\(suffix)").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func pem(label: String, der: [UInt8]) -> String {
        let base64 = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN \(label)-----\n\(base64)\n-----END \(label)-----\n"
    }

    /// PrivateKeyInfo { version 0, AlgorithmIdentifier { rsaEncryption, NULL }, OCTET STRING { RSAPrivateKey } }:
    /// what `openssl pkcs8 -topk8 -nocrypt` makes of a PKCS#1 key.
    static func pkcs8(rsaPKCS1 der: [UInt8]) -> [UInt8] {
        let version: [UInt8] = [0x02, 0x01, 0x00]
        let algorithm = derElement(0x30, [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00])
        return derElement(0x30, version + algorithm + derElement(0x04, der))
    }

    static func derElement(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8]
        if content.count < 0x80 {
            length = [UInt8(content.count)]
        } else {
            var count = content.count
            length = []
            while count > 0 {
                length.insert(UInt8(count & 0xFF), at: 0)
                count >>= 8
            }
            length.insert(0x80 | UInt8(length.count), at: 0)
        }
        return [tag] + length + content
    }
}
