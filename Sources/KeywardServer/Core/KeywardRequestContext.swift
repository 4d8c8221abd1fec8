// The request context of every Keyward route, carrying the socket peer's address.
import Hummingbird
import NIOCore

/// The request context of every Keyward route: Hummingbird's core context plus the socket peer's address,
/// from which `ClientAddress` tells who sent the request.
public struct KeywardRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    private let channel: any Channel

    /// Read when asked (the sign-in page), not for every request; nil when the request did not come over a
    /// socket (HummingbirdTesting's router client).
    public var remoteAddress: SocketAddress? { channel.remoteAddress }

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
