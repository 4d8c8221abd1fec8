// Sign-in with identity providers' settings: the per-address limit on refused callbacks.

/// What the identity-provider sign-in reads of the configuration, validated when the configuration loads.
struct IdentityProviderSettings: Sendable {
    /// `accounts.providerCallbackFailuresPerAddress`.
    var callbackFailuresPerAddress = 20
}
