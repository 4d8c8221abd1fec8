import Foundation
import KeywardJOSE

/// Sign-in with an identity provider, Backend-for-Frontend style (the ADR's flow, stricter): Keyward is the
/// confidential client, the browser only carries an encrypted single-use transaction cookie and the provider's
/// code. Start makes `state`, the PKCE verifier and `nonce`; the callback checks the cookie against the callback
/// (age, state, provider, issuer — the mix-up defence), spends the state once, exchanges the code, verifies the
/// id_token, and finds or creates the user. What follows (push MFA, the session) is the one login flow's.
final class ProviderSignIn: Sendable {
    private let providers: IdentityProviderService
    private let metadata: IdentityProviderMetadataCache
    private let jwks: JWKSCache
    private let tokens: ProviderTokenClient
    private let users: UserService
    private let replayStore: any ReplayStore
    let keys: TransactionKeys
    private let clock: any KeywardClock
    private let publicURL: String

    init(
        providers: IdentityProviderService, metadata: IdentityProviderMetadataCache, jwks: JWKSCache, tokens: ProviderTokenClient,
        users: UserService, replayStore: any ReplayStore, keys: TransactionKeys, clock: any KeywardClock, publicURL: String
    ) {
        self.providers = providers
        self.metadata = metadata
        self.jwks = jwks
        self.tokens = tokens
        self.users = users
        self.replayStore = replayStore
        self.keys = keys
        self.clock = clock
        self.publicURL = publicURL
    }

    struct Start: Sendable {
        /// Where the browser goes: the provider's authorization endpoint with the request.
        let location: String
        let transaction: SignInTransaction
    }

    func start(realm: String, alias: String, returnTo: String?) async throws(SignInFailure) -> Start {
        let provider = try await provider(realm: realm, alias: alias)
        let metadata = try await metadata.metadata(for: provider)
        let transaction = SignInTransaction.begin(realm: realm, alias: alias, issuer: provider.issuer, returnTo: returnTo, now: clock.now())
        var query = [
            ("response_type", "code"), ("client_id", provider.clientId), ("redirect_uri", redirectURI(provider)),
            ("scope", provider.scopes.joined(separator: " ")), ("state", transaction.state), ("nonce", transaction.nonce),
            ("code_challenge", transaction.codeChallenge), ("code_challenge_method", "S256"),
        ]
        if let domain = provider.hostedDomain { query.append(("hd", domain)) }
        let separator = metadata.authorizationEndpoint.contains("?") ? "&" : "?"
        let encoded = query.map { ProviderTokenClient.formEncode($0.0) + "=" + ProviderTokenClient.formEncode($0.1) }.joined(separator: "&")
        return Start(location: metadata.authorizationEndpoint + separator + encoded, transaction: transaction)
    }

    /// The callback's parameters, as the provider sent them (query, or form for `form_post`).
    struct Callback: Sendable {
        var state: String?
        var code: String?
        var error: String?
        var errorDescription: String?
        /// RFC 9207's issuer identification, when the provider sends it.
        var issuer: String?
    }

    /// The signed-in user and how the flow ends; `transaction` is what the callback's cookie held.
    func finish(realm: String, alias: String, callback: Callback, transaction: SignInTransaction) async throws(SignInFailure) -> (user: User, created: Bool) {
        guard transaction.realm == realm, transaction.alias == alias, callback.state == transaction.state else {
            throw SignInFailure(.stateMismatch, "this callback does not belong to the sign-in this browser started")
        }
        if let issuer = callback.issuer, issuer != transaction.issuer {
            throw SignInFailure(.issuerMismatch, "the callback names issuer \(issuer.prefix(200)), not \(transaction.issuer)")
        }
        let provider = try await provider(realm: realm, alias: alias)
        guard provider.issuer == transaction.issuer else {
            throw SignInFailure(.issuerMismatch, "provider '\(alias)' changed its issuer since this sign-in began")
        }
        try await spend(transaction)
        if let error = callback.error {
            throw SignInFailure(.providerError, "\(error.prefix(64))\(callback.errorDescription.map { ": \($0.prefix(200))" } ?? "")")
        }
        guard let code = callback.code, (1...2048).contains(code.utf8.count) else {
            throw SignInFailure(.invalidRequest, "the callback carries no code")
        }
        let metadata = try await metadata.metadata(for: provider)
        let clientSecret: String?
        do {
            clientSecret = try providers.clientSecret(of: provider)
        } catch {
            throw SignInFailure(.providerMisconfigured, "the client secret of provider '\(alias)' does not open under this master key")
        }
        let compact = try await tokens.idToken(.init(
            endpoint: metadata.tokenEndpoint, code: code, redirectURI: redirectURI(provider), codeVerifier: transaction.codeVerifier,
            clientId: provider.clientId, clientSecret: clientSecret, secretInBody: metadata.usesSecretPost
        ))
        let kid = (try? JWS.parse(compact))?.header.string("kid")
        guard let keys = await jwks.keys(url: metadata.jwksURI, owner: alias, kid: kid) else {
            throw SignInFailure(.providerUnavailable, "the keys of provider '\(alias)' cannot be fetched now; try again later")
        }
        let idToken = try ProviderIDToken(compact, provider: provider, metadata: metadata, keys: keys, nonce: transaction.nonce, now: clock.now())
        let signedIn: (user: User, created: Bool)
        do {
            signedIn = try await users.signInWithProvider(
                realm: realm, issuer: provider.issuer, subject: idToken.subject,
                details: .init(alias: alias, email: idToken.email, emailVerified: idToken.emailVerified, name: idToken.name),
                linkVerifiedEmail: provider.trustVerifiedEmail && provider.kind != .facebook
            )
        } catch UserError.accountExists(let providers) {
            throw SignInFailure(.accountExists, "an account with this e-mail address exists: sign in with \(providers.joined(separator: " or ")) first, then link \(provider.displayName) from your account page")
        } catch {
            throw SignInFailure(.providerUnavailable, "the account could not be stored: \(error)")
        }
        guard signedIn.user.enabled else { throw SignInFailure(.accountRefused, "this account is disabled; contact your administrator") }
        return signedIn
    }

    /// The transaction a callback's cookie holds, checked at this node's time.
    func transaction(cookie value: String, cookieName: String) throws(SignInFailure) -> SignInTransaction {
        try SignInTransaction.open(value, keys: keys, cookieName: cookieName, now: clock.now())
    }

    /// A transaction is good for one callback: a replayed one (the same cookie and state again) is refused.
    private func spend(_ transaction: SignInTransaction) async throws(SignInFailure) {
        let fresh: Bool
        do {
            fresh = try await replayStore.recordOnce(
                scope: "signin:\(transaction.realm)", key: transaction.state,
                expiresAt: transaction.startedAt.addingTimeInterval(SignInTransaction.lifetime + 60), now: clock.now()
            )
        } catch {
            throw SignInFailure(.providerUnavailable, "the sign-in cannot be recorded now; try again")
        }
        guard fresh else { throw SignInFailure(.transactionInvalid, "this sign-in was completed already; start again") }
    }

    private func provider(realm: String, alias: String) async throws(SignInFailure) -> IdentityProvider {
        let found: IdentityProvider?
        do {
            found = try await providers.provider(realm: realm, alias: alias)
        } catch {
            throw SignInFailure(.providerUnavailable, "the identity providers cannot be read now")
        }
        guard let found else { throw SignInFailure(.unknownProvider, "realm '\(realm)' has no identity provider '\(alias.prefix(64))'") }
        return found
    }

    private func redirectURI(_ provider: IdentityProvider) -> String {
        IdentityProvider.redirectURI(publicURL: publicURL, realm: provider.realm, alias: provider.alias)
    }
}
