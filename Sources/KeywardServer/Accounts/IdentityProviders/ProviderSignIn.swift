// Signing in with an identity provider: starting the flow, checking the callback, finding or linking the user.
import Foundation
import KeywardJOSE
import Logging

/// Sign-in with an identity provider, Backend-for-Frontend style (the ADR's flow, stricter): Keyward is the
/// confidential client, the browser only carries an encrypted single-use transaction cookie and the provider's
/// code. Start makes `state`, the PKCE verifier and `nonce`; the callback checks the cookie against the callback
/// (age, state, provider, issuer — the mix-up defence), spends the state once, exchanges the code, verifies the
/// id_token (or, for Facebook, asks Graph whom the access token is for), and finds or creates the user. What
/// follows (push MFA, the session) is the one login flow's.
final class ProviderSignIn: Sendable {
    private let providers: IdentityProviderService
    private let metadata: IdentityProviderMetadataCache
    private let jwks: JWKSCache
    private let tokens: ProviderTokenClient
    private let appleSecrets: AppleClientSecrets
    private let users: UserService
    private let singleUse: any SingleUseStore
    let keys: TransactionKeys
    private let clock: any KeywardClock
    private let publicURL: String
    private let audit: AuditLog
    private let logger: Logger
    /// Refused callbacks cost their sender nothing: one audit row per realm and code a minute.
    private let refusals = RefusalAuditSampler()

    init(
        providers: IdentityProviderService, metadata: IdentityProviderMetadataCache, jwks: JWKSCache, tokens: ProviderTokenClient,
        appleSecrets: AppleClientSecrets, users: UserService, singleUse: any SingleUseStore, keys: TransactionKeys, clock: any KeywardClock, publicURL: String,
        audit: AuditLog, logger: Logger
    ) {
        self.providers = providers
        self.metadata = metadata
        self.jwks = jwks
        self.tokens = tokens
        self.appleSecrets = appleSecrets
        self.users = users
        self.singleUse = singleUse
        self.keys = keys
        self.clock = clock
        self.publicURL = publicURL
        self.audit = audit
        self.logger = logger
    }

    /// A refused callback or start, for the operator: every one in the log with its detail and request id; in the
    /// audit trail sampled, since anyone can send them. A person who cancelled at the provider is not a refusal.
    func recordRefusal(_ failure: SignInFailure, realm: String?, alias: String?, requestId: String) async {
        logger.notice("sign-in refused", metadata: [
            "code": "\(failure.code.rawValue)", "reason": "\(failure.message)", "detail": "\(failure.detail ?? "")",
            "realm": "\(realm ?? "")", "provider": "\(alias.map { String($0.prefix(64)) } ?? "")", "requestId": "\(requestId)",
        ])
        guard let realm, failure.code != .providerError,
            let folded = refusals.admit(.init(realm: realm, reason: failure.code.rawValue), now: clock.now())
        else { return }
        var details = ["reason": failure.code.rawValue, "requestId": requestId]
        if folded > 0 { details["suppressed"] = String(folded) }
        await audit.record(.signInRefused, realm: realm, userId: nil, details: details)
    }

    struct Start: Sendable {
        /// Where the browser goes: the provider's authorization endpoint with the request.
        let location: String
        let transaction: SignInTransaction
    }

    /// `reauthenticate`: the person is asked to sign in again (before deleting the account, or linking another
    /// provider); the provider is asked to prompt for a credential rather than answer from its own session.
    /// `linkUserId`: the flow links the identity to that signed-in user instead of signing in (`finishLink`).
    func start(
        realm: String, alias: String, returnTo: String?, reauthenticate: Bool = false, linkUserId: String? = nil
    ) async throws(SignInFailure) -> Start {
        let provider = try await provider(realm: realm, alias: alias)
        let authorizationEndpoint: String
        if provider.kind == .facebook {
            guard let endpoints = provider.endpoints else { throw SignInFailure(.providerMisconfigured, "facebook provider '\(alias)' has no endpoints") }
            authorizationEndpoint = endpoints.authorization
        } else {
            authorizationEndpoint = try await metadata.metadata(for: provider).authorizationEndpoint
        }
        let transaction = SignInTransaction.begin(
            realm: realm, alias: alias, issuer: provider.issuer, returnTo: returnTo, reauthenticate: reauthenticate, linkUserId: linkUserId,
            now: clock.now()
        )
        var query = [
            ("response_type", "code"), ("client_id", provider.clientId), ("redirect_uri", redirectURI(provider)),
            // Facebook's dialog documents commas between permissions.
            ("scope", provider.scopes.joined(separator: provider.kind == .facebook ? "," : " ")), ("state", transaction.state),
            ("code_challenge", transaction.codeChallenge), ("code_challenge_method", "S256"),
        ]
        // No id_token from Facebook, so no nonce to put in one: there the state and the single-use transaction
        // carry the binding to this browser.
        if provider.kind != .facebook { query.append(("nonce", transaction.nonce)) }
        // Apple posts the answer (it must when name or e-mail is asked for): the callback's POST route, and the
        // re-post page `ProviderSignInRoutes` answers because that cross-site POST brings no Lax cookie.
        if provider.kind == .apple { query.append(("response_mode", "form_post")) }
        if let domain = provider.hostedDomain { query.append(("hd", domain)) }
        if reauthenticate {
            // OpenID Connect Core §3.1.2.1: ask for the credential again, and for the auth_time that shows it was.
            // Facebook's equivalent gives nothing back to check (see `credentialEntered`).
            query.append(contentsOf: provider.kind == .facebook ? [("auth_type", "reauthenticate")] : [("prompt", "login"), ("max_age", "0")])
        }
        let separator = authorizationEndpoint.contains("?") ? "&" : "?"
        return Start(location: authorizationEndpoint + separator + String.formEncoded(query), transaction: transaction)
    }

    /// The callback's parameters, as the provider sent them (query, or form for `form_post`).
    struct Callback: Sendable {
        var state: String?
        var code: String?
        var error: String?
        var errorDescription: String?
        /// RFC 9207's issuer identification, when the provider sends it.
        var issuer: String?
        /// Apple's `user` field (first authorization only).
        var appleUser: String?
    }

    /// The signed-in user and how the flow ends; `transaction` is what the callback's cookie held.
    func finish(
        realm: String, alias: String, callback: Callback, transaction: SignInTransaction
    ) async throws(SignInFailure) -> (user: User, created: Bool, credentialEntered: Bool) {
        guard transaction.linkUserId == nil else { throw SignInFailure(.transactionInvalid, "this flow links a provider; it signs nobody in") }
        let (provider, identity) = try await verifiedIdentity(realm: realm, alias: alias, callback: callback, transaction: transaction)
        let signedIn: (user: User, created: Bool)
        do {
            signedIn = try await users.signInWithProvider(
                realm: realm, issuer: provider.issuer, subject: identity.subject,
                details: .init(
                    alias: alias, email: identity.email, emailVerified: identity.emailVerified, name: identity.name, revocationToken: identity.revocationToken
                ),
                trustEmail: provider.trustsEmail, preferredUsername: identity.preferredUsername
            )
        } catch UserError.accountExists(let providers) {
            throw SignInFailure(.accountExists, "an account with this e-mail address exists: sign in with \(providers.joined(separator: " or ")) first, then link \(provider.displayName) from your account page")
        } catch {
            throw SignInFailure(.providerUnavailable, "the account cannot be stored now; try again later", detail: "\(error)")
        }
        guard signedIn.user.enabled else { throw SignInFailure(.accountRefused, "this account is disabled; contact your administrator") }
        return (signedIn.user, signedIn.created, identity.credentialEntered)
    }

    /// A link flow's callback: the provider's identity joins the account of `signedInUserId`, the user the browser
    /// is signed in as, who must be the one that began the flow. Returns the provider.
    func finishLink(
        realm: String, alias: String, callback: Callback, transaction: SignInTransaction, signedInUserId: String?
    ) async throws(SignInFailure) -> IdentityProvider {
        guard let linkUserId = transaction.linkUserId, linkUserId == signedInUserId else {
            throw SignInFailure(.transactionInvalid, "this browser is no longer signed in as the user who began linking; sign in and start again")
        }
        let (provider, identity) = try await verifiedIdentity(realm: realm, alias: alias, callback: callback, transaction: transaction)
        do {
            try await users.linkProvider(
                realm: realm, userId: linkUserId, issuer: provider.issuer, subject: identity.subject,
                details: .init(
                    alias: alias, email: identity.email, emailVerified: identity.emailVerified, name: identity.name, revocationToken: identity.revocationToken
                ),
                trustEmail: provider.trustsEmail
            )
        } catch UserError.identityLinkedElsewhere {
            throw SignInFailure(.identityInUse, "this \(provider.displayName) account is linked to another user; sign in with it to use that account")
        } catch {
            throw SignInFailure(.providerUnavailable, "the link cannot be stored now; try again later", detail: "\(error)")
        }
        return provider
    }

    /// The callback checked against its transaction, the code exchanged and the answer verified: who the provider
    /// says this is.
    private func verifiedIdentity(
        realm: String, alias: String, callback: Callback, transaction: SignInTransaction
    ) async throws(SignInFailure) -> (provider: IdentityProvider, identity: ProviderIdentity) {
        guard transaction.realm == realm, transaction.alias == alias, let state = callback.state, ConstantTime.equal(state, transaction.state) else {
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
        switch provider.kind {
        case .facebook:
            return (provider, try await facebookIdentity(provider, code: code, transaction: transaction))
        case .oidc, .google, .apple:
            return (provider, try await idTokenIdentity(provider, code: code, callback: callback, transaction: transaction))
        }
    }

    /// The code exchanged for an id_token, verified against the provider's keys (OpenID Connect, Google, Apple).
    private func idTokenIdentity(
        _ provider: IdentityProvider, code: String, callback: Callback, transaction: SignInTransaction
    ) async throws(SignInFailure) -> ProviderIdentity {
        let metadata = try await metadata.metadata(for: provider)
        let clientSecret: String? = if provider.kind == .apple { try appleSecrets.secret(for: provider) } else { try storedSecret(provider) }
        let (compact, refreshToken) = try await tokens.idToken(.init(
            endpoint: metadata.tokenEndpoint, code: code, redirectURI: redirectURI(provider), codeVerifier: transaction.codeVerifier,
            clientId: provider.clientId, clientSecret: clientSecret, secretInBody: metadata.usesSecretPost
        ))
        let kid = (try? JWS.parse(compact))?.header.string("kid")
        guard let keys = await jwks.keys(url: metadata.jwksURI, owner: provider.alias, kid: kid) else {
            throw SignInFailure(.providerUnavailable, "the keys of provider '\(provider.alias)' cannot be fetched now; try again later")
        }
        let idToken = try ProviderIDToken(compact, provider: provider, metadata: metadata, keys: keys, nonce: transaction.nonce, now: clock.now())
        // Apple's id_token has no name; the first callback's `user` field has it, once.
        let name = provider.kind == .apple ? AppleFirstAuthorization.name(fromUserField: callback.appleUser) : idToken.name
        // A credential given during this sign-in, not a provider session answering by itself (a minute of leeway
        // for the provider's clock).
        let entered = idToken.authTime.map { $0 >= transaction.startedAt.addingTimeInterval(-ProviderIDToken.leeway) } ?? false
        let revocationToken = provider.kind == .apple
            ? refreshToken.flatMap { try? AppleTokenRevocation.seal($0, realm: provider.realm, issuer: provider.issuer, subject: idToken.subject, masterKey: providers.masterKey) }
            : nil
        return ProviderIdentity(
            subject: idToken.subject, email: idToken.email, emailVerified: idToken.emailVerified, name: name, credentialEntered: entered,
            revocationToken: revocationToken, preferredUsername: Self.preferredUsername(idToken, provider: provider)
        )
    }

    /// The provider's username claim for a new user's name. An address names someone only when it counts as
    /// verified (a trusted provider said so), lower-cased as addresses are stored: otherwise the first to claim
    /// `ceo@corp.example` would be shown under that name.
    private static func preferredUsername(_ idToken: ProviderIDToken, provider: IdentityProvider) -> String? {
        guard provider.usernameClaim == "email" else { return idToken.preferredUsername }
        guard provider.trustsEmail, idToken.emailVerified == true else { return nil }
        return idToken.preferredUsername.map(UserService.comparableEmail)
    }

    /// The code exchanged for a user access token, which Graph then vouches for (`FacebookIdentityCheck`).
    private func facebookIdentity(_ provider: IdentityProvider, code: String, transaction: SignInTransaction) async throws(SignInFailure) -> ProviderIdentity {
        guard let endpoints = provider.endpoints, let appSecret = try storedSecret(provider) else {
            throw SignInFailure(.providerMisconfigured, "facebook provider '\(provider.alias)' has no endpoints or app secret")
        }
        let accessToken = try await tokens.accessToken(.init(
            endpoint: endpoints.token, code: code, redirectURI: redirectURI(provider), codeVerifier: transaction.codeVerifier,
            clientId: provider.clientId, clientSecret: appSecret, secretInBody: true
        ))
        // Graph says nothing about when the person last entered their password, and the re-authentication request
        // is a URL parameter the person at the browser can drop: a Facebook sign-in never counts as a recent one
        // (`credentialEntered` stays false). Facebook's addresses are never verified, so they name no one either.
        return try await FacebookIdentityCheck(http: tokens).identity(accessToken: accessToken, provider: provider, appSecret: appSecret)
    }

    private func storedSecret(_ provider: IdentityProvider) throws(SignInFailure) -> String? {
        do {
            return try providers.clientSecret(of: provider)
        } catch {
            throw SignInFailure(.providerMisconfigured, "the client secret of provider '\(provider.alias)' does not open under this master key")
        }
    }

    /// The transaction a callback's cookie holds, checked at this node's time.
    func transaction(cookie value: String, cookieName: String) throws(SignInFailure) -> SignInTransaction {
        try SignInTransaction.open(value, keys: keys, cookieName: cookieName, now: clock.now())
    }

    /// A transaction is good for one callback: a replayed one (the same cookie and state again) is refused.
    private func spend(_ transaction: SignInTransaction) async throws(SignInFailure) {
        let fresh: Bool
        do {
            fresh = try await singleUse.recordOnce(
                scope: "signin:\(transaction.realm)", key: transaction.state,
                expiresAt: transaction.startedAt.addingTimeInterval(SignInTransaction.lifetime + 60), now: clock.now()
            )
        } catch {
            throw SignInFailure(.providerUnavailable, "the sign-in cannot be recorded now; try again", detail: "\(error)")
        }
        guard fresh else { throw SignInFailure(.transactionInvalid, "this sign-in was completed already; start again") }
    }

    private func provider(realm: String, alias: String) async throws(SignInFailure) -> IdentityProvider {
        let found: IdentityProvider?
        do {
            found = try await providers.provider(realm: realm, alias: alias)
        } catch {
            throw SignInFailure(.providerUnavailable, "the identity providers cannot be read now", detail: "\(error)")
        }
        guard let found else { throw SignInFailure(.unknownProvider, "realm '\(realm)' has no identity provider '\(alias.prefix(64))'") }
        return found
    }

    private func redirectURI(_ provider: IdentityProvider) -> String {
        IdentityProvider.redirectURI(publicURL: publicURL, realm: provider.realm, alias: provider.alias)
    }
}
