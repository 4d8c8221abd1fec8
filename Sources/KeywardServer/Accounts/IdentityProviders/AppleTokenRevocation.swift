// Revoking a person's Sign in with Apple tokens when their account is deleted or Apple is unlinked.
import Foundation
import KeywardJOSE
import Logging

/// App Store rule 5.1.1(v): an app offering Sign in with Apple lets people delete their account, and revokes their
/// Apple tokens when they do, so the app no longer appears among the person's Apple ID sign-ins. Keyward keeps the
/// refresh token Apple gave at the code exchange sealed under the master key (bound to the identity), and revokes
/// it at Apple's `/auth/revoke` when the account is deleted or Apple is unlinked from it.
///
/// Revocation is best effort: Apple unreachable or refusing must not keep a person's account from being deleted.
/// Each outcome is logged and audited; an identity without a token (signed in before tokens were kept) has nothing
/// to revoke.
struct AppleTokenRevocation: Sendable {
    let providers: IdentityProviderService
    let appleSecrets: AppleClientSecrets
    let tokens: ProviderTokenClient
    let audit: AuditLog
    let logger: Logger

    /// Revokes the Apple tokens of `identities` (others are skipped); returns how many Apple accepted.
    @discardableResult
    func revoke(_ identities: [ExternalIdentity]) async -> Int {
        var revoked = 0
        for identity in identities {
            guard identity.kind == .provider, let details = identity.details, let sealed = details.revocationToken else { continue }
            let outcome: String
            do {
                try await revoke(identity, alias: details.alias, sealed: sealed)
                revoked += 1
                outcome = "revoked"
            } catch {
                logger.warning("apple token not revoked", metadata: [
                    "realm": "\(identity.realm)", "provider": "\(details.alias)", "reason": "\(error.message)", "detail": "\(error.detail ?? "")",
                ])
                outcome = error.code.rawValue
            }
            await audit.record(.appleTokenRevoked, realm: identity.realm, userId: identity.userId, details: ["provider": details.alias, "outcome": outcome])
        }
        return revoked
    }

    private func revoke(_ identity: ExternalIdentity, alias: String, sealed: String) async throws(SignInFailure) {
        let provider: IdentityProvider?
        do {
            provider = try await providers.provider(realm: identity.realm, alias: alias)
        } catch {
            throw SignInFailure(.providerUnavailable, "the identity providers cannot be read now", detail: "\(error)")
        }
        guard let provider, provider.kind == .apple, provider.issuer == identity.issuer, let endpoints = provider.endpoints else {
            throw SignInFailure(.providerMisconfigured, "provider '\(alias)' is no longer this identity's Apple provider")
        }
        let token: String
        do {
            token = try Self.open(sealed, realm: identity.realm, issuer: identity.issuer, subject: identity.subject, masterKey: providers.masterKey)
        } catch {
            throw SignInFailure(.providerMisconfigured, "the stored Apple token does not open under this master key")
        }
        try await tokens.revoke(
            endpoint: endpoints.appleRevocation, token: token, hint: "refresh_token", clientId: provider.clientId,
            clientSecret: try appleSecrets.secret(for: provider)
        )
    }

    /// The refresh token sealed for its identity (base64url), so a stored value cannot be moved to another.
    static func seal(_ token: String, realm: String, issuer: String, subject: String, masterKey: MasterKey) throws -> String {
        Base64URL.encode(try masterKey.seal(Array(token.utf8), context: context(realm: realm, issuer: issuer, subject: subject)))
    }

    static func open(_ sealed: String, realm: String, issuer: String, subject: String, masterKey: MasterKey) throws -> String {
        String(decoding: try masterKey.open(try Base64URL.decode(sealed), context: context(realm: realm, issuer: issuer, subject: subject)), as: UTF8.self)
    }

    private static func context(realm: String, issuer: String, subject: String) -> String {
        "keyward apple refresh token\u{0}\(realm)\u{0}\(issuer)\u{0}\(subject)"
    }
}

extension AppleTokenRevocation: UserRemovalStep {
    /// The user's Apple tokens are revoked at Apple once the user has gone (read now, before the identities go).
    func removing(realm: String, user: User, identities: [ExternalIdentity]) async throws -> (@Sendable () async -> Void)? {
        { await self.revoke(identities) }
    }
}

extension AppleTokenRevocation: IdentityUnlinkStep {
    /// An unlinked Apple identity's token is revoked at Apple.
    func unlinked(_ identity: ExternalIdentity) async {
        await revoke([identity])
    }
}
