// Why a sign-in with an identity provider stopped: a stable code, a page message and an operator-only detail.
import HTTPTypes

/// Why a sign-in with an identity provider stopped, with a stable code. The browser sees a page saying what to
/// do (`message`); what only an operator should read — a database's or a network library's own words — is
/// `detail`, which goes to the log with the request id, never to the page. Never a 500.
struct SignInFailure: Error, Sendable, Equatable, CustomStringConvertible {
    enum Code: String, Sendable {
        /// No transaction cookie for this callback: it expired, was used, or never existed in this browser.
        case transactionMissing = "transaction_missing"
        /// The cookie does not open (tampered, another key, another flow).
        case transactionInvalid = "transaction_invalid"
        case transactionExpired = "transaction_expired"
        /// `state` differs from the transaction's, or the transaction was for another provider (mix-up).
        case stateMismatch = "state_mismatch"
        /// The RFC 9207 `iss` parameter names another issuer than the transaction's.
        case issuerMismatch = "issuer_mismatch"
        /// The provider answered with an error (`access_denied`, …).
        case providerError = "provider_error"
        case providerUnavailable = "provider_unavailable"
        case providerMisconfigured = "provider_misconfigured"
        /// The code could not be exchanged (reused, expired, wrong verifier).
        case codeExchangeFailed = "code_exchange_failed"
        /// The id_token failed a check; the message names it.
        case idTokenInvalid = "id_token_invalid"
        /// Facebook: Graph says the user token is not valid, names no user, or `/me` disagrees with `debug_token`.
        case accessTokenInvalid = "access_token_invalid"
        /// Facebook: the user token was issued to another app (token substitution).
        case accessTokenWrongApp = "access_token_wrong_app"
        /// The account's domain is not the provider's hosted domain, or the account is disabled.
        case accountRefused = "account_refused"
        case unknownProvider = "unknown_provider"
        /// The identity is new, and its e-mail address belongs to an account it may not be linked to by address.
        case accountExists = "account_exists"
        /// The provider identity a signed-in user tried to link belongs to another user.
        case identityInUse = "identity_in_use"
        case invalidRequest = "invalid_request"
        /// Too many callbacks from this client address were refused lately (`ProviderCallbackLimiter`).
        case tooManyAttempts = "too_many_attempts"
    }

    let code: Code
    let message: String
    let detail: String?

    init(_ code: Code, _ message: String, detail: String? = nil) {
        self.code = code
        self.message = message
        self.detail = detail
    }

    var description: String { "\(code.rawValue): \(message)" + (detail.map { " (\($0))" } ?? "") }

    var status: HTTPResponse.Status {
        switch code {
        case .providerUnavailable: .serviceUnavailable
        case .tooManyAttempts: .tooManyRequests
        case .providerMisconfigured: .badGateway
        case .unknownProvider: .notFound
        case .accountRefused: .forbidden
        case .accountExists, .identityInUse: .conflict
        default: .badRequest
        }
    }
}
