import Hummingbird
import NIOCore

/// The request context of every Keyward route: Hummingbird's core context plus the socket peer's address,
/// from which `ClientAddress` tells who sent the request.
public struct KeywardRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// nil when the request did not come over a socket (HummingbirdTesting's router client).
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
