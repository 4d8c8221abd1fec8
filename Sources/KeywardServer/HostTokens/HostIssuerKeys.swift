// Where a host-token issuer's verification keys come from: its cached JWKS URL or its PEM certificates.
import Foundation
import KeywardJOSE
import Synchronization

/// The verification keys of host-token issuers: a JWKS URL through the node's `JWKSCache`, PEM certificates parsed
/// once per distinct text.
final class HostIssuerKeys: Sendable {
    private let jwks: JWKSCache
    private let clock: any KeywardClock
    private let certificatesByText = Mutex<[String: IssuerCertificates]>([:])

    init(jwks: JWKSCache, clock: any KeywardClock) {
        self.jwks = jwks
        self.clock = clock
    }

    /// The keys a token of `issuer` with header `kid` is checked with.
    func keys(for issuer: HostIssuer, kid: String?) async throws(HostTokenRefusal) -> JWTVerificationPolicy.Keys {
        switch issuer.keySource {
        case .pemCertificates(let pem):
            return try certificates(pem, issuer: issuer.issuer).keys(kid: kid, now: clock.now(), issuer: issuer.issuer)
        case .jwksURL(let url):
            guard let keys = await jwks.keys(url: url, owner: issuer.issuer, kid: kid) else {
                throw HostTokenRefusal(.keysUnavailable, "the keys of issuer \(issuer.issuer) cannot be fetched now; try again later")
            }
            return .kidOptional(keys)
        }
    }

    private func certificates(_ pem: String, issuer: String) throws(HostTokenRefusal) -> IssuerCertificates {
        if let parsed = certificatesByText.withLock({ $0[pem] }) { return parsed }
        do throws(HostIssuerError) {
            let parsed = try IssuerCertificates(pem: pem)
            certificatesByText.withLock { $0[pem] = parsed }
            return parsed
        } catch {
            // Checked when the issuer was added; reaching this means the stored row was changed by hand.
            throw HostTokenRefusal(.keysUnavailable, "the certificates registered for issuer \(issuer) cannot be read: \(error)")
        }
    }
}
