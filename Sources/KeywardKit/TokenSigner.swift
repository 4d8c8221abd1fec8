// How the host app hands KeywardKit the JWTs its own auth provider signs (host-signed tokens, issue 15): the
// callback protocol an existing signer already implements, and an async protocol for new code.

/// The completion handler of ``TokenSigner/sign(_:resultHandler:)``: `.success` with the signed JWT, or
/// `.failure` with the host app's own error.
public typealias ResultHandler<T> = (Result<T, any Error>) -> Void

/// The host app's source of signed JWTs (host tokens): it asks the app's own auth provider (its backend, Firebase,
/// Cognito, …) for a JWT naming the signed-in user and hands it back. Keyward verifies the signature; KeywardKit
/// only pre-checks the token's shape (``HostToken``) and exchanges it for a Keyward access token
/// (``HostTokenSession``).
///
/// The shape is the one host apps already implement, so an existing signer compiles unchanged:
///
/// ```swift
/// final class MyTokenSigner: TokenSigner {
///     func sign(_ unsignedToken: String, resultHandler: @escaping ResultHandler<String>) {
///         // unsignedToken is deprecated and ignored: ask the auth provider for a signed JWT.
///         myBackend.fetchJWT { jwt, error in
///             if let jwt { resultHandler(.success(jwt)) } else { resultHandler(.failure(error ?? MyError.noToken)) }
///         }
///     }
/// }
/// ```
///
/// Every token is used for one exchange only: Keyward refuses a `jti` it has seen (`jti_replayed`), so return a
/// newly minted token on every call rather than a cached one.
///
/// KeywardKit calls `sign` on the ``HostTokenSession`` actor and waits for the handler without blocking a thread.
/// The handler may be called on any thread, even before `sign` returns. Its first call counts and later ones are
/// ignored; a handler that is never called fails the exchange with ``KeywardKitError/signerTimedOut(after:)``
/// once the session's signer timeout has passed, so a lost callback costs one failed request, never a caller
/// waiting forever. `sign` must return promptly and do its work asynchronously: it runs on the session actor, so
/// a `sign` that blocks (a semaphore, synchronous network I/O) holds the session and its timeout cannot start.
/// New code may implement ``AsyncTokenSigner`` instead.
public protocol TokenSigner {
    /// Obtains a signed JWT and passes it to `resultHandler`.
    ///
    /// - Parameters:
    ///   - unsignedToken: Deprecated and ignored. KeywardKit always passes an empty string; the host app builds its
    ///     own token. The parameter stays only so that existing signers keep compiling.
    ///   - resultHandler: Call it once, with the signed JWT (`header.payload.signature`) or the error that
    ///     prevented it.
    func sign(_ unsignedToken: String, resultHandler: @escaping ResultHandler<String>)
}

/// The async form of ``TokenSigner`` for new code: return a newly signed JWT naming the signed-in user, or throw.
///
/// The same rules hold: every call returns a new token (its `jti` is spent by the exchange), and a call that runs
/// past the session's signer timeout fails the exchange with ``KeywardKitError/signerTimedOut(after:)`` and is
/// cancelled.
public protocol AsyncTokenSigner: Sendable {
    /// A signed JWT (`header.payload.signature`) from the app's own auth provider.
    func signedToken() async throws -> String
}
