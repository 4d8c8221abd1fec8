// The token endpoint's logic: identifying the client, answering the grant, checking DPoP, issuing the token.
import Foundation
import Logging
import KeywardHTTPInput
import KeywardJOSE
import KeywardWire

/// The token endpoint's logic, independent of HTTP plumbing: `client_credentials` here, extension grants from
/// other parts (`TokenGrant`), and for all of them client identification, the DPoP proof and the token.
public final class TokenService: Sendable {
    public struct Request: Sendable {
        /// The path's realm, resolved in front of the route (`RealmResolution`).
        public var realm: Realm
        /// Decoded form parameters; duplicates were already refused by the caller.
        public var form: [String: String]
        /// Every `Authorization` header value received.
        public var authorization: [String]
        /// Every `DPoP` header value received.
        public var dpopProofs: [String]
        /// The endpoint's public URL (what `htu` must name).
        public var url: String

        public init(realm: Realm, form: [String: String], authorization: [String], dpopProofs: [String], url: String) {
            self.realm = realm
            self.form = form
            self.authorization = authorization
            self.dpopProofs = dpopProofs
            self.url = url
        }
    }

    private let clients: ClientService
    private let clientAuthentication: ClientAuthentication
    private let issuer: AccessTokenIssuer
    private let singleUse: any SingleUseStore
    private let dpopOptions: DPoPVerifier.Options
    private let clock: any KeywardClock
    private let metrics: KeywardMetrics
    /// When set, every proof must carry a current server nonce (RFC 9449 §8).
    private let nonces: DPoPNonces?
    /// Extension grants by `grant_type`; an assertion grant type may have several (`TokenGrant.assertionType`).
    private let grants: [String: [any TokenGrant]]
    /// The registered devices behind keys (Core's seam, filled by the Devices part).
    private let deviceKeys: DeviceKeys
    private let logger: Logger

    /// A successful answer, plus the nonce to advertise in `DPoP-Nonce` when nonces are required.
    public struct Issued: Sendable {
        public let response: TokenResponse
        public let dpopNonce: String?
    }

    init(
        clients: ClientService, issuer: AccessTokenIssuer, singleUse: any SingleUseStore,
        dpopOptions: DPoPVerifier.Options, nonces: DPoPNonces?, clock: any KeywardClock, metrics: KeywardMetrics, deviceKeys: DeviceKeys,
        logger: Logger, grants: [any TokenGrant] = []
    ) {
        self.grants = Dictionary(grouping: grants, by: \.grantType)
        (self.deviceKeys, self.logger) = (deviceKeys, logger)
        self.nonces = nonces
        self.clientAuthentication = ClientAuthentication(clients: clients)
        self.clients = clients
        self.issuer = issuer
        self.singleUse = singleUse
        self.dpopOptions = dpopOptions
        self.clock = clock
        self.metrics = metrics
    }

    /// The same endpoint with more extension grants (the parts assembled after the OAuth core add theirs).
    func adding(_ more: [any TokenGrant]) -> TokenService {
        TokenService(
            clients: clients, issuer: issuer, singleUse: singleUse, dpopOptions: dpopOptions, nonces: nonces,
            clock: clock, metrics: metrics, deviceKeys: deviceKeys, logger: logger, grants: grants.values.flatMap { $0 } + more
        )
    }

    /// Every `grant_type` answered, for discovery.
    var grantTypes: [String] { ["client_credentials"] + grants.keys.sorted() }

    public func token(_ request: Request) async throws(OAuthFailure) -> Issued {
        do {
            return try await issueToken(request)
        } catch let failure as OAuthFailure {
            if let reason = failure.dpopReason { metrics.dpopRejected(endpoint: .token, reason: reason) }
            throw failure
        } catch {
            throw OAuthFailure.temporarilyUnavailable
        }
    }

    private func issueToken(_ request: Request) async throws -> Issued {
        let realm = request.realm
        guard let grantType = request.form["grant_type"] else { throw OAuthFailure.invalidRequest("missing parameter: grant_type") }
        let now = clock.now()
        let client: OAuthClient
        var decision: TokenGrantDecision
        if grantType == "client_credentials" {
            client = try await clientAuthentication.identify(form: request.form, authorization: request.authorization, realm: realm.name)
            guard !client.isPublic else {
                throw OAuthFailure(status: 400, code: .unauthorizedClient, description: "client '\(client.clientId)' is public and cannot use client_credentials")
            }
            decision = TokenGrantDecision(subject: "service-account-" + client.clientId, requiresDPoP: false)
            decision.actsForPerson = false
        } else if let grant = grant(grantType, assertion: request.form["assertion"]) {
            client = try await clientAuthentication.identify(form: request.form, authorization: request.authorization, realm: realm.name)
            decision = try await grant.authorize(TokenGrantRequest(realm: realm, client: client, form: request.form, now: now))
        } else {
            throw OAuthFailure(
                status: 400, code: .unsupportedGrantType,
                description: "grant_type '\(grantType.prefix(64))' is not supported; use one of: \(grantTypes.joined(separator: ", "))"
            )
        }
        let scope = try decision.scope ?? grantedScope(requested: request.form["scope"], client: client, admin: grantType == "client_credentials")

        var jkt: String?
        // With a grant's single-use value to spend, the proof's jti is recorded together with it, after both checks.
        let deferredReplay = decision.singleUse == nil ? nil : DeferredDPoPReplay(scope: "dpop:" + realm.name)
        switch request.dpopProofs.count {
        case 0:
            if client.requireDPoP || decision.requiresDPoP || decision.boundThumbprint != nil {
                let who = client.requireDPoP ? "client '\(client.clientId)'" : "this grant"
                throw OAuthFailure(
                    status: 400, code: .invalidDPoPProof, description: "\(who) requires a DPoP proof (DPoP header)", dpopReason: .proofMissing,
                    reason: "dpop_proof_required"
                )
            }
        case 1:
            let replayCache: any DPoPReplayCache = deferredReplay ?? DPoPReplayAdapter(store: singleUse, scope: "dpop:" + realm.name)
            let verifier = DPoPVerifier(options: dpopOptions, replayCache: replayCache)
            let proof: DPoPVerifier.Verified
            do throws(DPoPError) {
                proof = try await verifier.verify(proof: request.dpopProofs[0], method: "POST", url: request.url, now: now)
            } catch {
                // The replay memory could not be written: the proof may be good, and the client should try again.
                guard error.reason != .replayCheckFailed else { throw OAuthFailure.temporarilyUnavailable }
                throw OAuthFailure(status: 400, code: error.code == .useNonce ? .useDPoPNonce : .invalidDPoPProof, description: error.message, dpopReason: .proof(error.reason))
            }
            if let nonces, !(proof.claims["nonce"]?.stringValue.map { nonces.isValid($0, now: now) } ?? false) {
                throw OAuthFailure(
                    status: 400, code: .useDPoPNonce, description: "DPoP proof must carry the nonce from the DPoP-Nonce header",
                    dpopReason: .proof(.nonce), dpopNonce: nonces.current(now: now)
                )
            }
            if let bound = decision.boundThumbprint, bound.thumbprint != proof.thumbprint { throw bound.refusal }
            jkt = proof.thumbprint
        default:
            throw OAuthFailure(status: 400, code: .invalidDPoPProof, description: "more than one DPoP header", dpopReason: .multipleProofs)
        }
        let device = try await boundDevice(realm: realm.name, jkt: jkt, decision: decision)
        if let device { decision.accessTokenClaims.merge(device.claims) { _, fromDevice in fromDevice } }
        if let once = decision.singleUse {
            let proofEntry = deferredReplay?.entry
            let entries = [proofEntry, SingleUseEntry(scope: once.scope, key: once.key, expiresAt: once.expiresAt)].compactMap { $0 }
            let fresh = try await singleUse.recordEachOnce(entries, now: now)
            if proofEntry != nil, fresh.first != true {
                throw OAuthFailure(status: 400, code: .invalidDPoPProof, description: "DPoP proof jti has already been used", dpopReason: .proof(.replayed))
            }
            guard fresh.last == true else { throw await once.replayed() }
        }

        let issued = try await issuer.issue(
            realm: realm, clientId: client.clientId, subject: decision.subject, scope: scope, jkt: jkt, now: now, extraClaims: decision.accessTokenClaims
        )
        let extras = try await decision.finish?(TokenGrantIssued(client: client, accessToken: issued.token, jkt: jkt, now: now)) ?? TokenGrantExtras()
        if let device {
            // Which person a device is theirs is shown on the account page; the tokens do not wait on it.
            do {
                try await deviceKeys.signedIn(device, userId: decision.subject, at: now)
            } catch {
                logger.warning("a device's person not recorded", metadata: ["device": "\(device.deviceId)", "error": "\(error)"])
            }
        }
        let tokenType = jkt == nil ? "Bearer" : "DPoP"
        metrics.tokenIssued(realm: realm.name, tokenType: tokenType)
        var response = TokenResponse(accessToken: issued.token, tokenType: tokenType, expiresIn: issued.expiresIn, scope: scope.isEmpty ? nil : scope)
        (response.refreshToken, response.idToken) = (extras.refreshToken, extras.idToken)
        return Issued(response: response, dpopNonce: nonces?.current(now: now))
    }

    /// The registered device whose key the person's token is bound to, if any; a removed (or rejected) device's key
    /// is refused before anything single-use is spent.
    private func boundDevice(realm: String, jkt: String?, decision: TokenGrantDecision) async throws -> RegisteredDeviceKey? {
        guard decision.actsForPerson, let jkt else { return nil }
        let device: RegisteredDeviceKey?
        do {
            device = try await deviceKeys.device(realm: realm, jkt: jkt)
        } catch {
            throw OAuthFailure.temporarilyUnavailable
        }
        if let device, !device.usable {
            throw OAuthFailure.invalidGrant(
                "the DPoP key belongs to device '\(device.deviceId)' of app '\(device.appId)', which was removed or is not registered", reason: "device_not_usable"
            )
        }
        return device
    }

    /// The grant for `grantType`; where several take assertions, the one for this assertion's `typ`, else the one for any.
    private func grant(_ grantType: String, assertion: String?) -> (any TokenGrant)? {
        guard let candidates = grants[grantType] else { return nil }
        guard candidates.count > 1 else { return candidates.first }
        // The header alone decides: the chosen grant reads and verifies the whole assertion itself.
        let type = assertion.flatMap { try? JWS.parse($0) }?.header["typ"]?.stringValue
        return candidates.first { $0.assertionType != nil && $0.assertionType == type } ?? candidates.first { $0.assertionType == nil }
    }

    /// The scope asked for, each granted to the client, or all the client holds. Admin scopes go only into the client's
    /// own client_credentials tokens, never into a token issued for a person.
    private func grantedScope(requested: String?, client: OAuthClient, admin: Bool) throws -> String {
        let own = client.scope.split(separator: " ").map(String.init)
        let adminScopes = admin ? client.adminScopes.sorted().map(\.tokenScope) : []
        let allowed = Set(own + adminScopes)
        guard let requested, !requested.isEmpty else { return (own + adminScopes).joined(separator: " ") }
        let wanted = requested.split(separator: " ").map(String.init)
        if let refused = wanted.first(where: { !allowed.contains($0) }) {
            throw OAuthFailure(status: 400, code: .invalidScope, description: "scope '\(refused.prefix(64))' is not granted to this client")
        }
        return wanted.joined(separator: " ")
    }
}
