/// Who the provider says signed in, whichever way it said it (an id_token, or Facebook's Graph): what Keyward
/// files the identity under (issuer, subject) and keeps of its profile.
struct ProviderIdentity: Sendable, Equatable {
    let subject: String
    let email: String?
    /// Nil when the provider does not say; Facebook's is always false (Graph gives no such flag).
    let emailVerified: Bool?
    let name: String?
    /// The provider showed that the person gave it a credential during this sign-in, not merely that a session
    /// of theirs was still open there: an id_token's `auth_time` at or after the sign-in began. Only such a
    /// sign-in counts as a recent one (deleting the account, linking another provider).
    var credentialEntered: Bool = false
    /// Sign in with Apple: the refresh token, sealed (`AppleTokenRevocation`), for revoking when the account goes.
    var revocationToken: String?
    /// The value of the provider's username claim (`IdentityProvider.usernameClaim`), which a new user is named by
    /// when it is a valid username no one has.
    var preferredUsername: String?
}
