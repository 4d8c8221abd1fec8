// The broker's relay on the authorization pages: the app's request in, a delegation handed off at its return address.
import Foundation
import KeywardHTTPInput
import KeywardJOSE

/// The relay (issue 29) as OpenID's pages run it (`RelayAuthorization`): a public broker client's request for a
/// delegation to its session key, signed in and consented to like any authorization request, answered at the
/// registered return address with `#code=…&nonce=…` for the app to take with that key.
struct BrokerRelay: RelayAuthorization {
    let clients: ClientService
    let handoffs: HandoffService
    let delegations: Delegations
    let settings: BrokerSettingsStore
    /// Where each delegation is kept as one of the person's app sessions.
    let appSessions: RefreshTokens
    /// Relays completed per person: a signed-in person looping the relay fills their own share, not the app's.
    let relays: HandoffLimiter
    let audit: AuditLog
    let clock: any KeywardClock
    /// A removed device's key (or one it rotated away from) is handed nothing.
    let deviceKeys: DeviceKeys

    func accept(realm: Realm, parameters: [String: String]) async throws -> (PendingAuthorization, OAuthClient) {
        let request: RelayRequest
        do throws(RelayRequest.Refusal) {
            request = try RelayRequest(parameters)
        } catch {
            throw AuthorizationService.Refusal.page(error.text)
        }
        guard let client = try await clients.client(realm: realm.name, clientId: request.clientId) else {
            throw AuthorizationService.Refusal.page("No app '\(displayable(request.clientId))' is registered in this realm.")
        }
        guard client.isPublic, client.broker else {
            throw AuthorizationService.Refusal.page("The app '\(client.clientId)' is not registered to receive sign-ins through the relay.")
        }
        guard client.redirectURI(matching: request.returnURL) != nil else {
            throw AuthorizationService.Refusal.page("The return address is not one the app '\(client.clientId)' registered, so nothing can be sent to it.")
        }
        let sessionKey = String(decoding: StrictJSON.serialize(request.sessionKey.requiredMembers), as: UTF8.self)
        let days = try await settings.settings(realm: realm.name).delegationLifetimeDays
        let relay = PendingAuthorization.Relay(sessionKey: sessionKey, nonce: request.nonce, days: days)
        return (PendingAuthorization(relayFor: client.clientId, returnURL: request.returnURL, relay: relay, now: clock.now()), client)
    }

    func consentText(_ pending: PendingAuthorization) -> String {
        let days = pending.relay?.days ?? BrokerSettings.delegationDays.upperBound
        return "Act for you from this app on this device, without asking again, for \(days) \(days == 1 ? "day" : "days")"
    }

    /// Only a first-party app whose return address is a claimed https link: a custom scheme can be registered by
    /// another app on the device, which would then receive a delegation the person never saw asked for.
    func skipsConsent(_ pending: PendingAuthorization, client: OAuthClient) -> Bool {
        client.firstParty && client.redirectURI(matching: pending.redirectURI)?.kind == .https
    }

    /// The delegation is signed and handed off before its app session is written, so a hand-off refused for its
    /// bounds leaves nothing behind; a session that then fails to be written leaves a delegation that buys nothing.
    func complete(_ pending: PendingAuthorization, realm: String, session: BrowserSession) async throws -> String {
        guard let relay = pending.relay, let userId = session.userId else { throw Self.malformed }
        let sessionKey: JWK
        do {
            sessionKey = try JWK(jsonString: relay.sessionKey)
        } catch {
            throw Self.malformed
        }
        let now = clock.now()
        if relays.refusal(userId, now: now) != nil {
            return refusal(pending, code: "temporarily_unavailable", description: "too many sign-ins through the relay for this person; try again in a minute")
        }
        relays.count(userId, now: now)
        let acr = AuthenticationLevel.of(amr: session.amr)
        let jkt = sessionKey.thumbprint()
        if let device = try await deviceKeys.device(realm: realm, jkt: jkt), !device.usable {
            return refusal(pending, code: "access_denied", description: "the app's key belongs to a device that was removed")
        }
        let sessionId = RefreshTokens.newSessionId()
        let grant = Delegations.Grant(
            userId: userId, clientId: pending.clientId, sessionKey: sessionKey, authTime: session.signInTime, amr: session.amr, acr: acr,
            sessionId: sessionId
        )
        let lifetime = TimeInterval(relay.days) * 86400
        let delegation = try await delegations.issue(grant, realm: realm, lifetime: lifetime, now: now)
        let code: String
        do {
            code = try await handoffs.put(
                realm: realm, clientId: pending.clientId, nonce: relay.nonce, jkt: jkt, kind: .delegation, blob: delegation,
                lifetime: try await settings.settings(realm: realm).handoffLifetime
            )
        } catch let refusal as APIError where refusal.code == .handoffLimit {
            return self.refusal(pending, code: "temporarily_unavailable", description: "too many sign-ins for this app are waiting to be taken; try again shortly")
        }
        try await appSessions.startSession(
            RefreshTokens.Grant(
                clientId: pending.clientId, userId: userId, sessionId: session.lastingId, jkt: jkt, authTime: session.signInTime,
                amr: session.amr, acr: acr
            ),
            id: sessionId, realm: realm, now: now
        )
        await audit.record(
            .delegationIssued, realm: realm, userId: userId, clientId: pending.clientId,
            details: ["session": sessionId, "jkt": jkt, "days": String(relay.days)]
        )
        return Self.fragment(pending.redirectURI, [("code", code), ("nonce", relay.nonce)])
    }

    func refusal(_ pending: PendingAuthorization, code: String, description: String) -> String {
        let text = AuthorizationService.errorDescription(description)
        return Self.fragment(pending.redirectURI, [("error", code), ("error_description", text), ("nonce", pending.relay?.nonce ?? "")])
    }

    /// The return address with the answer in its fragment: the browser hands it to the app and never sends it to a server.
    private static func fragment(_ returnURL: String, _ parameters: [(String, String)]) -> String {
        returnURL + "#" + FormBody.encode(parameters)
    }

    private static let malformed = APIError(.badRequest, .invalidRequest, "the relay request held by the browser is not well formed")
}
