// The endpoints other parts serve under a realm's OpenID Connect paths, which discovery names.
import Synchronization

/// Endpoints another part serves at `/realms/{realm}/protocol/openid-connect/{path}`, plugged in as it is
/// assembled, so that discovery (RFC 8414, OpenID Connect Discovery §3) names them without OAuth naming the part.
final class ProviderEndpoints: Sendable {
    enum Endpoint: String, Sendable, CaseIterable {
        /// The authorization endpoint (RFC 6749 §3.1), with its code flow, PKCE S256 and RFC 9207's `iss`.
        case authorization = "auth"
        /// Pushed authorization requests (RFC 9126).
        case pushedAuthorizationRequest = "ext/par"
        /// OpenID Connect Core §5.3.
        case userinfo
        /// RFC 7009.
        case revocation = "revoke"
        /// OpenID Connect RP-Initiated Logout 1.0.
        case endSession = "logout"
    }

    private let served = Mutex<Set<Endpoint>>([])

    func add(_ endpoint: Endpoint) { served.withLock { _ = $0.insert(endpoint) } }

    func serves(_ endpoint: Endpoint) -> Bool { served.withLock { $0.contains(endpoint) } }
}
