// Accounts' settings: password hashing and its threads, and the per-address sign-in limit.

/// What Accounts reads of the configuration (`accounts.*`), validated when the configuration loads.
struct AccountsSettings: Sendable {
    /// `accounts.bcryptCost`.
    var bcryptCost = 12
    /// `accounts.passwordThreads` / `accounts.maxConcurrentPasswordChecks`.
    var passwordThreads = 2
    var maxConcurrentPasswordChecks = 64
    /// `accounts.loginAttemptsPerAddress`.
    var loginAttemptsPerAddress = 100
}
