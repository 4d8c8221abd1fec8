// Test support: the real App Attest vectors in Tests/Fixtures/app-attest, read into the fields the tests need.
import Foundation
import Yams

/// One of the real App Attest vectors in Tests/Fixtures/app-attest (multi-document YAML: an attestation, its first
/// assertion, and receipts): the fields the tests need.
struct AppAttestVector: Sendable {
    let name: String
    let attestation: [UInt8]
    let keyID: [UInt8]
    let keyIDBase64: String
    /// SHA-256 of this is the attestation's clientDataHash.
    let attestationClientData: [UInt8]
    let appID: String
    /// When the device made the attestation: inside the leaf's three-day validity.
    let attestedAt: Date
    let environment: String
    let assertion: [UInt8]
    let assertionClientData: [UInt8]
    let assertionCounter: UInt32
    /// The key's SubjectPublicKeyInfo PEM, as the document records it.
    let publicKeyPEM: String

    static let folder = "app-attest"

    static func all() throws -> [AppAttestVector] {
        try Fixtures.files(in: folder, extension: "yaml").map { try AppAttestVector(file: $0) }
    }

    init(file: String) throws {
        let documents = try Yams.load_all(yaml: Fixtures.text(file)).compactMap { $0 as? [String: Any] }
        func document(_ type: String) throws -> [String: Any] {
            guard let found = documents.first(where: { $0["type"] as? String == type }) else { throw VectorError("\(file) has no \(type)") }
            return found
        }
        func text(_ document: [String: Any], _ key: String) throws -> String {
            guard let value = document[key] as? String else { throw VectorError("\(file): \(key) missing") }
            return value
        }
        func base64(_ document: [String: Any], _ key: String) throws -> [UInt8] {
            guard let bytes = Data(base64Encoded: try text(document, key)) else { throw VectorError("\(file): \(key) is not base64") }
            return Array(bytes)
        }
        let attestation = try document("attestation"), assertion = try document("assertion")
        name = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
        self.attestation = try base64(attestation, "attestationBase64")
        keyIDBase64 = try text(attestation, "keyIdBase64")
        keyID = try base64(attestation, "keyIdBase64")
        attestationClientData = try base64(attestation, "clientDataBase64")
        appID = try text(attestation, "teamIdentifier") + "." + text(attestation, "bundleIdentifier")
        guard let time = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text(attestation, "timestamp"))
        else { throw VectorError("\(file): unreadable timestamp") }
        attestedAt = time
        environment = try text(attestation, "environment")
        self.assertion = try base64(assertion, "assertionBase64")
        assertionClientData = try base64(assertion, "clientDataBase64")
        guard let counter = assertion["counter"] as? Int else { throw VectorError("\(file): assertion counter missing") }
        assertionCounter = UInt32(counter)
        publicKeyPEM = try text(attestation, "publicKey")
    }
}

struct VectorError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
