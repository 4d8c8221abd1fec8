// Test support: the real Android Key Attestation chains in Tests/Fixtures with their facts, and hand-built DER.
import Foundation
import KeywardAttestation
import SwiftASN1
import X509

/// The real Key Attestation chains under Tests/Fixtures/android-key-attestation, each with the facts its json
/// gives: the creation time to verify at and the challenge the app passed.
enum AndroidVectors {
    static let folder = "android-key-attestation"

    /// Chains that verify to the built-in roots at their creation time (akita, caiman, tegu).
    static func currentChains() throws -> [String] {
        let names = try ["akita/sdk34", "caiman/sdk36", "tegu/sdk36"].flatMap { try chains(in: $0) }
        precondition(names.count == 9, "the fixture folders changed: \(names)")
        return names
    }

    /// Blueline's 2018 and 2020 chains, which end in Google's original 2016 RSA root certificate.
    static func bluelineChains() throws -> [String] {
        let names = try chains(in: "blueline/sdk28")
        precondition(names.count == 5, "the fixture folders changed: \(names)")
        return names
    }

    /// invalid/: chains a verifier must refuse.
    static func invalidChains() throws -> [String] {
        let names = try chains(in: "invalid")
        precondition(names.count == 2, "the fixture folders changed: \(names)")
        return names
    }

    /// "akita/sdk34/TEE_EC_NONE" and so on: the path of a chain without its extension.
    private static func chains(in subfolder: String) throws -> [String] {
        try Fixtures.files(in: "\(folder)/\(subfolder)", extension: "pem").map { String($0.dropFirst(folder.count + 1).dropLast(4)) }
    }

    static func derCertificates(_ name: String) throws -> [[UInt8]] {
        try PEMDocument.parseMultiple(pemString: Fixtures.text("\(folder)/\(name).pem")).map { Array($0.derBytes) }
    }

    static func chain(_ name: String) throws -> AndroidCertificateChain {
        try AndroidCertificateChain(pem: Fixtures.text("\(folder)/\(name).pem"))
    }

    static func expectation(_ name: String) throws -> [String: Any] {
        try Fixtures.androidExpectation("\(folder)/\(name).json")
    }

    static func creationTime(_ name: String) throws -> Date {
        try Fixtures.androidCreationTime("\(folder)/\(name).json")
    }

    static func challenge(_ name: String) throws -> [UInt8] {
        guard let text = try expectation(name)["attestationChallenge"] as? String, let bytes = Data(base64Encoded: text) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        return Array(bytes)
    }

    /// The KeyDescription extension value of the first certificate carrying it.
    static func keyDescriptionBytes(_ name: String) throws -> [UInt8] {
        for der in try derCertificates(name) {
            let certificate = try Certificate(derEncoded: der)
            if let value = certificate.extensions[oid: KeyDescription.oid]?.value { return Array(value) }
        }
        throw CocoaError(.fileReadCorruptFile)
    }

    /// Google's original 2016 RSA root certificate: the last certificate of every blueline chain file.
    static func root2016() throws -> PinnedRoots {
        let chain = try derCertificates("blueline/sdk28/TEE_EC_NONE")
        return PinnedRoots([try Certificate(derEncoded: chain[chain.count - 1])])
    }
}

/// DER built by hand for the tests that need a certificate or a KeyDescription that no device wrote.
enum TestDER {
    static func tlv(_ identifier: [UInt8], _ body: [UInt8]) -> [UInt8] {
        identifier + length(body.count) + body
    }

    static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    static func sequence(_ children: [[UInt8]]) -> [UInt8] {
        tlv([0x30], children.flatMap { $0 })
    }

    /// `[number] EXPLICIT` around one value, in the long form for numbers from 31 up.
    static func explicit(_ number: Int, _ value: [UInt8]) -> [UInt8] {
        if number < 31 { return tlv([0xA0 | UInt8(number)], value) }
        var digits: [UInt8] = [UInt8(number & 0x7F)]
        var rest = number >> 7
        while rest > 0 {
            digits.insert(0x80 | UInt8(rest & 0x7F), at: 0)
            rest >>= 7
        }
        return tlv([0xBF] + digits, value)
    }

    /// The encoded children of a constructed DER value.
    static func children(_ der: [UInt8]) throws -> [[UInt8]] {
        guard case .constructed(let nodes) = try DER.parse(der).content else { throw CocoaError(.fileReadCorruptFile) }
        return nodes.map { Array($0.encodedBytes) }
    }
}
