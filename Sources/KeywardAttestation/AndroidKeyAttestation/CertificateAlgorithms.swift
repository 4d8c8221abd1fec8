// Spotting ML-DSA certificates swift-certificates cannot verify, to refuse them as unsupported, not damaged.
import SwiftASN1

/// Names the algorithms of a certificate that swift-certificates would not parse, by walking its DER by hand:
/// chains of the newest devices are signed with ML-DSA (FIPS 204), which swift-certificates 1.21 cannot verify.
/// Such a chain is reported as `UNSUPPORTED_ALGORITHM`, not as damage.
enum CertificateAlgorithms {
    /// id-ml-dsa-44, -65 and -87 (NIST CSOR 2.16.840.1.101.3.4.3.17 to .19), as signature and as key algorithms.
    static let unsupported: [ASN1ObjectIdentifier: String] = [
        [2, 16, 840, 1, 101, 3, 4, 3, 17]: "ML-DSA-44 (2.16.840.1.101.3.4.3.17)",
        [2, 16, 840, 1, 101, 3, 4, 3, 18]: "ML-DSA-65 (2.16.840.1.101.3.4.3.18)",
        [2, 16, 840, 1, 101, 3, 4, 3, 19]: "ML-DSA-87 (2.16.840.1.101.3.4.3.19)",
    ]

    /// The first unsupported algorithm among the certificate's signature algorithm, its TBS signature field and
    /// its subject key's algorithm; nil when there is none or the DER does not have a certificate's shape.
    static func unsupportedAlgorithm(in der: [UInt8]) -> String? {
        guard let certificate = try? DER.parse(der), let parts = children(of: certificate), parts.count == 3,
              let tbs = children(of: parts[0])
        else { return nil }
        // TBSCertificate: [0] version (optional), serial, signature, issuer, validity, subject, subjectPublicKeyInfo.
        let offset = tbs.first?.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) ? 1 : 0
        var candidates = [parts[1]]
        if tbs.count > offset + 5 {
            candidates.append(tbs[offset + 1])
            if let keyInfo = children(of: tbs[offset + 5]), let keyAlgorithm = keyInfo.first { candidates.append(keyAlgorithm) }
        }
        for algorithmIdentifier in candidates {
            if let oid = children(of: algorithmIdentifier)?.first.flatMap({ try? ASN1ObjectIdentifier(derEncoded: $0) }),
               let name = unsupported[oid] {
                return name
            }
        }
        return nil
    }

    private static func children(of node: ASN1Node) -> [ASN1Node]? {
        guard case .constructed(let nodes) = node.content else { return nil }
        return Array(nodes)
    }
}
