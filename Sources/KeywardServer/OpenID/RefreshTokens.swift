// Refresh-token families: started by an authorization code, rotated on every use, revoked whole on a reuse.
import Crypto
import Foundation
import KeywardJOSE
import Logging

/// The families of refresh tokens (RFC 9700 §4.14.2): one starts when a code is redeemed; each refresh moves it to
/// the next generation; a token of an earlier generation, or a code, presented again revokes the family.
struct RefreshTokens: Sendable {
    let store: any RefreshFamilyStore
    let key: SymmetricKey
    let users: UserService
    let audit: AuditLog
    let logger: Logger
    /// Refreshes write their families' last use together, as the single-use records of their tokens are written.
    private let uses: GroupCommit<RefreshFamilyUse, Void>

    /// `writer`: where the grouped writes of uses run (`KeywardDatabase.writerExecutor`).
    init(store: any RefreshFamilyStore, key: SymmetricKey, users: UserService, audit: AuditLog, logger: Logger, writer: (any TaskExecutor)?) {
        (self.store, self.key, self.users, self.audit, self.logger) = (store, key, users, audit, logger)
        uses = GroupCommit(maxGroup: 64, executor: writer) { (uses: [RefreshFamilyUse]) async -> Void in
            do {
                try await store.recordUses(uses)
            } catch {
                // What was refused or granted does not depend on it: the single-use records decide; this is the use
                // the account page shows.
                logger.warning("refresh-token families' last use not written", metadata: ["families": "\(uses.count)", "error": "\(error)"])
            }
        }
    }

    /// Starts the family of a redeemed code and returns its first refresh token; refused when the code's reuse
    /// revoked the family before this redemption stored it.
    func start(_ code: AuthorizationCode, realm: String, jkt: String?, now: Date) async throws(OAuthFailure) -> String {
        let family = Self.family(of: code, realm: realm, jkt: jkt, now: now)
        let inserted: Bool
        do {
            inserted = try await store.insert(family)
        } catch {
            throw Self.unavailable
        }
        guard inserted else {
            throw OAuthFailure.invalidGrant("the authorization code was used already; the tokens issued for it are revoked", reason: "code_reused")
        }
        return token(family)
    }

    /// What an app session started without a code holds (the broker's delegation): the family it is kept as.
    struct Grant: Sendable {
        let clientId: String
        let userId: String
        /// The browser session it came from (`BrowserSession.lastingId`): ending that session ends this one.
        let sessionId: String
        let jkt: String?
        let authTime: Date
        let amr: [String]
        let acr: String
    }

    /// Starts an app session that holds no refresh token, only its place among the person's app sessions: listed on
    /// the account page, ended with the browser session it came from, by sign-out everywhere, a password change or a
    /// disabled account. `id` (128 random bits, `newSessionId()`) is what its credential names as `sid`.
    func startSession(_ grant: Grant, id: String, realm: String, now: Date) async throws(OAuthFailure) {
        let family = Self.family(id: id, realm: realm, scope: "", grant: grant, now: now)
        let inserted: Bool
        do {
            inserted = try await store.insert(family)
        } catch {
            throw Self.unavailable
        }
        guard inserted else { throw Self.unavailable }
    }

    /// A new app session's id: 128 random bits, base64url, as a family's.
    static func newSessionId() -> String { Base64URL.encode(SecureRandom.bytes(16)) }

    func token(_ family: RefreshFamily) -> String {
        RefreshToken(familyId: family.id, generation: family.generation).encoded(realm: family.realm, key: key)
    }

    /// The token's family and generation, when the token is this server's for `realm`.
    func presented(_ text: String, realm: String) -> RefreshToken? { RefreshToken(text, realm: realm, key: key) }

    func family(realm: String, id: String) async throws(OAuthFailure) -> RefreshFamily? {
        do {
            return try await store.family(realm: realm, id: id)
        } catch {
            throw Self.unavailable
        }
    }

    /// The token after the one of `generation`, whose single-use record the refresh has written: that record is what
    /// makes the presented token spent, so nothing else has to move atomically with it.
    func next(_ family: RefreshFamily, after generation: Int64, now: Date) async -> String {
        await uses.submit(RefreshFamilyUse(familyId: family.id, generation: generation + 1, at: now))
        return RefreshToken(familyId: family.id, generation: generation + 1).encoded(realm: family.realm, key: key)
    }

    /// A rotated refresh token came back: whoever holds the family's current token may not be its app (RFC 9700
    /// §4.14.2), so the family ends. Audited.
    func revokeReused(_ family: RefreshFamily, now: Date) async {
        guard await revoke(family, now: now) else { return }
        await audit.record(.refreshTokenReused, realm: family.realm, userId: family.userId, clientId: family.clientId, details: ["family": family.id])
    }

    /// The app ended its session (RFC 7009) or the person ended it.
    func end(_ family: RefreshFamily, now: Date) async {
        _ = await revoke(family, now: now)
    }

    /// A code came back after its first redemption: the family that redemption started ends, or is written ended if
    /// the first redemption has not stored it yet (RFC 9700 §4.2.4). Audited.
    func revokeStartedBy(_ code: AuthorizationCode, realm: String, now: Date) async {
        guard let existing = try? await store.family(realm: realm, id: code.id) else {
            // Not redeemed before (an expired code, or one whose first redemption is still under way): written revoked.
            if code.expiresAt > now, await revoke(Self.family(of: code, realm: realm, jkt: nil, now: now), now: now) {
                await audit.record(.authorizationCodeReused, realm: realm, userId: code.userId, clientId: code.clientId, details: ["family": code.id])
            }
            return
        }
        guard existing.revokedAt == nil, await revoke(existing, now: now) else { return }
        await audit.record(.authorizationCodeReused, realm: realm, userId: code.userId, clientId: code.clientId, details: ["family": code.id])
    }

    /// Refuses a user who was disabled or deleted since they signed in.
    func requireEnabled(realm: String, userId: String) async throws(OAuthFailure) {
        let user: User?
        do {
            user = try await users.user(realm: realm, id: userId)
        } catch {
            throw Self.unavailable
        }
        guard let user, user.enabled else {
            throw OAuthFailure.invalidGrant("the user is disabled or no longer exists", reason: "user_disabled")
        }
    }

    private func revoke(_ family: RefreshFamily, now: Date) async -> Bool {
        do {
            return try await store.revoke(family, now: now)
        } catch {
            logger.error("refresh-token family not revoked", metadata: ["family": "\(family.id)", "error": "\(error)"])
            return false
        }
    }

    private static func family(of code: AuthorizationCode, realm: String, jkt: String?, now: Date) -> RefreshFamily {
        let grant = Grant(
            clientId: code.clientId, userId: code.userId, sessionId: code.sessionId, jkt: jkt, authTime: code.authTime, amr: code.amr, acr: code.acr
        )
        return family(id: code.id, realm: realm, scope: code.scope, grant: grant, now: now)
    }

    /// A new family at its first generation, living `RefreshFamily.lifetime`.
    private static func family(id: String, realm: String, scope: String, grant: Grant, now: Date) -> RefreshFamily {
        RefreshFamily(
            id: id, realm: realm, clientId: grant.clientId, userId: grant.userId, sessionId: grant.sessionId, scope: scope, jkt: grant.jkt,
            authTime: grant.authTime, amr: grant.amr, acr: grant.acr, generation: 0, createdAt: now, lastUsedAt: now,
            expiresAt: now.addingTimeInterval(RefreshFamily.lifetime)
        )
    }

    static let unavailable = OAuthFailure(status: 503, code: .unavailable, description: "the token service is temporarily unavailable")
}

/// `grant_type=refresh_token` (RFC 6749 §6): the family's current token, by the client it was issued to, with a
/// proof by the family's key when it is DPoP-bound (RFC 9449 §5). Answers a new access token and the next refresh
/// token; the presented one stops working.
struct RefreshTokenGrant: TokenGrant {
    var grantType: String { "refresh_token" }

    let refresh: RefreshTokens

    func authorize(_ request: TokenGrantRequest) async throws(OAuthFailure) -> TokenGrantDecision {
        let realm = request.realm.name
        guard let text = request.form["refresh_token"], !text.isEmpty else { throw OAuthFailure.invalidRequest("missing parameter: refresh_token") }
        guard let presented = refresh.presented(text, realm: realm), let family = try await refresh.family(realm: realm, id: presented.familyId) else {
            throw OAuthFailure.invalidGrant("the refresh token is not valid", reason: "refresh_token_invalid")
        }
        guard family.clientId == request.client.clientId else {
            throw OAuthFailure.invalidGrant("the refresh token was issued to another client", reason: "refresh_token_client_mismatch")
        }
        guard family.isLive(now: request.now) else {
            throw OAuthFailure.invalidGrant("the refresh token was revoked or has expired", reason: "refresh_token_revoked")
        }
        // The family's generation may lag behind the newest token but is never ahead of it: below it, the token was spent.
        guard presented.generation >= family.generation else {
            await refresh.revokeReused(family, now: request.now)
            throw OAuthFailure.invalidGrant("the refresh token was used already; the sign-in it belonged to is revoked", reason: "refresh_token_reused")
        }
        try await refresh.requireEnabled(realm: realm, userId: family.userId)

        var decision = TokenGrantDecision(subject: family.userId, requiresDPoP: false)
        decision.scope = try Self.scope(requested: request.form["scope"], granted: family.scope)
        decision.accessTokenClaims = [
            "auth_time": .number(family.authTime.timeIntervalSince1970), "acr": .string(family.acr), "sid": .string(family.id),
        ]
        decision.singleUse = TokenGrantDecision.SingleUse(
            scope: "refresh-token:" + realm, key: family.id + "." + String(presented.generation), expiresAt: family.expiresAt,
            replayed: { [refresh, now = request.now] in
                await refresh.revokeReused(family, now: now)
                return OAuthFailure.invalidGrant("the refresh token was used already; the sign-in it belonged to is revoked", reason: "refresh_token_reused")
            }
        )
        if let jkt = family.jkt {
            decision.boundThumbprint = (
                jkt, OAuthFailure(status: 400, code: .invalidDPoPProof, description: "the refresh token is bound to another DPoP key", reason: "refresh_token_key_mismatch")
            )
        }
        decision.finish = { [refresh] issued in
            TokenGrantExtras(refreshToken: await refresh.next(family, after: presented.generation, now: issued.now))
        }
        return decision
    }

    /// RFC 6749 §6: a refresh may ask for less than the sign-in granted, never more.
    static func scope(requested: String?, granted: String) throws(OAuthFailure) -> String {
        guard let requested, !requested.isEmpty else { return granted }
        let allowed = Set(granted.split(separator: " "))
        let wanted = requested.split(separator: " ")
        if let extra = wanted.first(where: { !allowed.contains($0) }) {
            throw OAuthFailure(status: 400, code: .invalidScope, description: "scope '\(extra.prefix(64))' was not granted to this sign-in")
        }
        return wanted.joined(separator: " ")
    }
}
