// The seam through which the broker's relay runs on the authorization endpoint's pages.
import Foundation
import Synchronization

/// A request that ends in a hand-off at the app's return address instead of a code (the broker's relay, issue 29).
/// The part that owns it plugs it in (`RelayAuthorizations`); the authorization pages run it through the same
/// sign-in, second factor and consent as any other request, and ask it for the request, the consent's words and the
/// answer.
protocol RelayAuthorization: Sendable {
    /// `GET /realms/{realm}/auth/relay`: the request checked against its client; refused with an
    /// `AuthorizationService.Refusal`.
    func accept(realm: Realm, parameters: [String: String]) async throws -> (PendingAuthorization, OAuthClient)
    /// What the consent page says the app will be able to do.
    func consentText(_ pending: PendingAuthorization) -> String
    /// Whether the person may be spared the consent page: never where another app could receive the answer.
    func skipsConsent(_ pending: PendingAuthorization, client: OAuthClient) -> Bool
    /// The answer to a complete request, at the app's return address.
    func complete(_ pending: PendingAuthorization, realm: String, session: BrowserSession) async throws -> String
    /// An error for the app at its return address.
    func refusal(_ pending: PendingAuthorization, code: String, description: String) -> String
}

/// Where the broker plugs its relay in while it is assembled (after OpenID), so OpenID names no broker type.
final class RelayAuthorizations: Sendable {
    private let plugged = Mutex<(any RelayAuthorization)?>(nil)

    func plug(_ relay: any RelayAuthorization) { plugged.withLock { $0 = relay } }

    var relay: (any RelayAuthorization)? { plugged.withLock { $0 } }
}
