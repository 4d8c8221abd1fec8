// The keys of an issuer registered with PEM certificates, the kids naming them and their validity periods.
import Crypto
import Foundation
import KeywardAttestation
import KeywardJOSE
import SwiftASN1
import X509

/// The keys of an issuer registered with PEM certificates: each certificate's public key, the names a header
/// `kid` may use for it, and the period it may be used in (the certificate's own; expiry is checked at every use).
struct IssuerCertificates: Sendable {
    struct Entry: Sendable {
        let key: JWK
        /// RFC 7638 thumbprint of the key, and the certificate's `x5t#S256` and `x5t` (RFC 7517 §4.8-4.9): the
        /// kids issuers put on certificate-backed keys.
        let names: Set<String>
        let notValidBefore: Date
        let notValidAfter: Date
        let subject: String
    }

    let entries: [Entry]

    /// Parses every CERTIFICATE block of `pem`. Any other block, a malformed certificate or an unusable key is an
    /// error naming it: a registry entry is all good or refused.
    init(pem: String) throws(HostIssuerError) {
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: pem)
        } catch {
            throw .invalidPEM("no PEM certificate could be read (\(error))")
        }
        guard !documents.isEmpty else { throw .invalidPEM("no PEM certificate found") }
        var entries: [Entry] = []
        for (index, document) in documents.enumerated() {
            guard document.discriminator == "CERTIFICATE" else {
                throw .invalidPEM("block \(index + 1) is \"\(document.discriminator)\", not a CERTIFICATE")
            }
            let certificate: Certificate
            do {
                certificate = try Certificate(derEncoded: document.derBytes)
            } catch {
                throw .invalidPEM("certificate \(index + 1) is malformed (\(error))")
            }
            let key: JWK
            do throws(JOSEError) {
                key = try certificate.publicKey.jwk()
            } catch {
                throw .invalidPEM("certificate \(index + 1) (\(certificate.subject)): \(error.message)")
            }
            let der = document.derBytes
            entries.append(Entry(
                key: key,
                names: [key.thumbprint(), Base64URL.encode(Array(SHA256.hash(data: der))), Base64URL.encode(Array(Insecure.SHA1.hash(data: der)))],
                notValidBefore: certificate.notValidBefore, notValidAfter: certificate.notValidAfter,
                subject: String(describing: certificate.subject)
            ))
        }
        self.entries = entries
    }

    /// The keys usable at `now`, for a token with `kid` (nil: every key is a candidate).
    func keys(kid: String?, now: Date, issuer: String) throws(HostTokenRefusal) -> JWTVerificationPolicy.Keys {
        let current = entries.filter { $0.notValidBefore <= now && now < $0.notValidAfter }
        guard !current.isEmpty else {
            throw HostTokenRefusal(.keyExpired, "no certificate of issuer \(issuer) is valid now (the last expired \(latestExpiry.map(Self.format) ?? "?"))")
        }
        guard let kid else { return .kidOptional(JWKSet(keys: current.map(\.key))) }
        guard let match = current.first(where: { $0.names.contains(kid) }) else {
            if entries.contains(where: { $0.names.contains(kid) }) {
                throw HostTokenRefusal(.keyExpired, "the certificate of issuer \(issuer) that kid names is not valid now")
            }
            throw HostTokenRefusal(.unknownKey, "kid \"\(displayable(kid))\" names none of issuer \(issuer)'s certificates")
        }
        var key = match.key
        key.kid = kid
        return .single(key)
    }

    var latestExpiry: Date? { entries.map(\.notValidAfter).max() }

    static func format(_ date: Date) -> String { date.formatted(.iso8601) }
}
