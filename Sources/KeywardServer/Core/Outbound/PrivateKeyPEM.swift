// Reading the PKCS#8 PEM private keys outbound services hand out (Google, Apple), with clear refusals for other shapes.
import Foundation
import KeywardJOSE

/// Reads the private keys outbound services hand out (Google service-account `private_key`, Apple `.p8`): PEM armour
/// around unencrypted PKCS#8. Other shapes are refused with a message that says what was found and how to fix it,
/// because a key that "could not be read" is a poor thing to debug at start-up.
enum PrivateKeyPEM {
    enum KeyType {
        case rsa
        case p256

        var algorithm: JWSAlgorithm {
            switch self {
            case .rsa: .rs256
            case .p256: .es256
            }
        }

        var name: String {
            switch self {
            case .rsa: "an RSA"
            case .p256: "a P-256 EC"
            }
        }
    }

    /// Problems are plain strings; callers put the setting and file in front.
    struct Problem: Error {
        let message: String
    }

    static func signingKey(pem: String, expected: KeyType) throws(Problem) -> SigningKey {
        let der = try pkcs8DER(pem: pem)
        let found = try PKCS8AlgorithmIdentifier.keyType(der: der)
        guard found == expected else {
            throw Problem(message: "key is \(found.name) key; \(expected.name) key is required")
        }
        do {
            return try SigningKey(algorithm: expected.algorithm, serialized: der)
        } catch {
            throw Problem(message: "\(expected.name) PKCS#8 key could not be read (\(error))")
        }
    }

    /// The DER inside exactly one `-----BEGIN PRIVATE KEY-----` block.
    static func pkcs8DER(pem: String) throws(Problem) -> [UInt8] {
        let lines = pem.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let begin = lines.firstIndex(where: { $0.hasPrefix("-----BEGIN ") && $0.hasSuffix("-----") }) else {
            throw Problem(message: "no PEM \"-----BEGIN PRIVATE KEY-----\" block")
        }
        let label = String(lines[begin].dropFirst("-----BEGIN ".count).dropLast("-----".count))
        switch label {
        case "PRIVATE KEY":
            break
        case "ENCRYPTED PRIVATE KEY":
            throw Problem(message: "the private key is encrypted; export it without a passphrase (PKCS#8, unencrypted)")
        case "RSA PRIVATE KEY", "EC PRIVATE KEY":
            throw Problem(message: "PEM block is \"\(label)\" (PKCS#1/SEC1); convert it to PKCS#8 "
                + "(\"openssl pkcs8 -topk8 -nocrypt\")")
        default:
            throw Problem(message: "PEM block is \"\(label)\"; a \"PRIVATE KEY\" (PKCS#8) block is required")
        }
        guard let end = lines[(begin + 1)...].firstIndex(of: "-----END \(label)-----") else {
            throw Problem(message: "PEM block has no \"-----END \(label)-----\" line")
        }
        let body = lines[(begin + 1)..<end].joined()
        guard !body.isEmpty, let der = Data(base64Encoded: body) else {
            throw Problem(message: "PEM body is not valid base64")
        }
        return Array(der)
    }
}
