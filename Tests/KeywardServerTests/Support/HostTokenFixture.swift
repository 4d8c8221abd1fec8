// Test support: a customer's auth provider for host-token tests: RSA keys, minted host tokens, PEM certificates.
import Crypto
import _CryptoExtras
import Foundation
import HTTPTypes
import HummingbirdTesting
import KeywardJOSE
import KeywardServer
import NIOCore
import SwiftASN1
import X509
import XCTest

/// A customer's auth provider for the host-token tests: RSA keys (generated once per test process: a 2048-bit key
/// takes a while), host tokens minted with any header and claims, and a self-signed PEM certificate.
enum HostTokenFixture {
    static let issuer = "https://auth.customer.example"
    static let pemIssuer = "https://pem.customer.example"
    static let audience = TestServer.publicURL + "/realms/demo"
    static let appClient = "customer-app"
    static let subject = "enterprise-0001"

    static let rsaKeys: [_RSA.Signing.PrivateKey] = (0..<2).map { _ in try! _RSA.Signing.PrivateKey(keySize: .bits2048) }
    static let signingKeys: [SigningKey] = rsaKeys.map { try! SigningKey(algorithm: .rs256, serialized: Array($0.derRepresentation)) }

    /// The public JWK of signing key `index` under `kid`.
    static func publicJWK(_ index: Int, kid: String) -> JWK {
        var key = signingKeys[index].publicJWK
        key.kid = kid
        return key
    }

    /// A host token that passes every rule at `now`, after `changes` (nil removes a claim) and header changes.
    static func token(
        now: Date, key: Int = 0, kid: String? = "k1", iss: String = issuer, changes: [String: JSONValue?] = [:],
        header: [String: JSONValue?] = [:]
    ) throws -> String {
        let iat = Double(Int(now.timeIntervalSince1970))
        var claims: JSONObject = [
            "iss": .string(iss), "sub": .string(subject), "aud": .string(audience), "iat": .number(iat), "exp": .number(iat + 300),
            "jti": .string(UUID().uuidString),
        ]
        for (name, value) in changes { claims[name] = value ?? nil }
        var head: JSONObject = ["typ": "JWT"]
        if let kid { head["kid"] = .string(kid) }
        for (name, value) in header { head[name] = value ?? nil }
        return try JWS.sign(header: head, claims: claims, key: signingKeys[key])
    }

    /// A self-signed certificate for RSA key `index`, valid from `notBefore` for `days`.
    static func certificatePEM(_ index: Int, notBefore: Date, days: Double) throws -> String {
        let key = Certificate.PrivateKey(rsaKeys[index])
        let name = try DistinguishedName { CommonName("host-token test issuer \(index)") }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: key.publicKey,
            notValidBefore: notBefore, notValidAfter: notBefore.addingTimeInterval(days * 86400),
            issuer: name, subject: name, signatureAlgorithm: .sha256WithRSAEncryption, extensions: Certificate.Extensions(),
            issuerPrivateKey: key
        )
        return try certificate.serializeAsPEM().pemString
    }

    /// The certificate's `x5t#S256`, a kid a token may name it by.
    static func x5tS256(_ pem: String) throws -> String {
        Base64URL.encode(Array(SHA256.hash(data: try PEMDocument(pemString: pem).derBytes)))
    }

    /// Registers the JWKS issuer (and the PEM issuer when given), the public app client, and enrolls `subject`.
    static func register(_ server: TestServer, jwksURL: String?, pem: String? = nil, allowBearer: Bool = false) async throws {
        let issuers = server.runtime.hostTokens.issuers
        if let jwksURL {
            _ = try await issuers.add(.init(realm: "demo", issuer: issuer, jwksURL: jwksURL, allowBearer: allowBearer))
            _ = try await issuers.enroll(realm: "demo", issuer: issuer, subjects: [subject])
        }
        if let pem {
            _ = try await issuers.add(.init(realm: "demo", issuer: pemIssuer, pemCertificates: pem))
            // Another id than the JWKS issuer's: a username is one user.
            _ = try await issuers.enroll(realm: "demo", issuer: pemIssuer, subjects: ["pem-" + subject])
        }
        _ = try await server.runtime.oauth.clients.createPublicClient(realm: "demo", clientId: appClient)
    }

    static func form(_ assertion: String, client: String = appClient) -> String {
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&client_id=\(client)&assertion=\(assertion)"
    }
}

extension TestClientProtocol {
    /// Exchanges `assertion` with a fresh DPoP proof by `key` (none when nil).
    func exchange(_ server: TestServer, _ assertion: String, key: SigningKey? = nil, client: String = HostTokenFixture.appClient)
        async throws -> (status: HTTPResponse.Status, json: JSONObject, headers: HTTPFields)
    {
        try await requestToken(body: HostTokenFixture.form(assertion, client: client), proofs: try key.map { [try server.tokenProof($0)] } ?? [])
    }
}
