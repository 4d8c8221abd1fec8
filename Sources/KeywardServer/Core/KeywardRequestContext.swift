// The request context of every Keyward route: the socket peer, the realm and the caller, each resolved once.
import Hummingbird
import KeywardJOSE
import KeywardWire
import NIOCore

/// Who sent a request, as an authenticator of a part proved it: a DPoP-bound token's subject and key, an enrolled
/// push device, a registered device's signed request. Each part defines its own callers; a route reads the one
/// its authenticator put on the context with `KeywardRequestContext.caller(_:)`.
public protocol RequestCaller: Sendable {}

/// The request context of every Keyward route: Hummingbird's core context, the socket peer's address (from which
/// `ClientAddress` tells who sent the request), and what the middleware in front of the route resolved once:
/// the realm of a `/realms/{realm}/…` path and the authenticated caller.
public struct KeywardRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    private let channel: any Channel
    /// Set by the realm middleware (`RealmResolution`) of every route under `/realms/{realm}`.
    var resolvedRealm: Realm?
    /// Set by the authenticator in front of the route, if any.
    var authenticatedCaller: (any RequestCaller)?
    /// A JSON body parsed once in front of the route, where the checks before authentication need it (push MFA).
    var jsonBody: JSONObject?

    /// Read when asked (the sign-in page), not for every request; nil when the request did not come over a
    /// socket (HummingbirdTesting's router client).
    public var remoteAddress: SocketAddress? { channel.remoteAddress }

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// The realm of the path. Only a route registered without the realm middleware in front fails here: a
    /// programming error, answered as one.
    var realm: Realm {
        get throws(UnwiredRoute) {
            guard let resolvedRealm else { throw UnwiredRoute(missing: "realm") }
            return resolvedRealm
        }
    }

    /// The caller the route's authenticator proved, of the type that authenticator puts here.
    func caller<Caller: RequestCaller>(_ type: Caller.Type) throws(UnwiredRoute) -> Caller {
        guard let caller = authenticatedCaller as? Caller else { throw UnwiredRoute(missing: "caller \(String(reflecting: Caller.self))") }
        return caller
    }
}

/// A route read what no middleware in front of it resolved (its realm, its caller): a wiring mistake. No error
/// middleware answers it in a body of its own, so it reaches `ErrorMiddleware`'s last branch: logged with the
/// request id, answered as a bare 500 without the detail.
struct UnwiredRoute: Error, CustomStringConvertible {
    let missing: String
    var description: String { "no \(missing) was resolved in front of this route" }
}
