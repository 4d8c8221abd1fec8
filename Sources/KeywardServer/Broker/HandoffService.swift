// Storing hand-offs under a one-time code and taking them, once, with the code, the nonce and the key.
import Foundation
import KeywardJOSE
import KeywardWire
import Logging

/// The broker's hand-offs (issue 29). A hand-off is stored under a random 128-bit code for a short while; the app
/// takes it with that code, the nonce it chose, and a DPoP proof by the key the hand-off names. Every refusal of a
/// take is one answer, so a caller learns nothing of which part was wrong; a wrong nonce burns the code.
struct HandoffService: Sendable {
    let store: any HandoffStore
    /// Failed takes per client address.
    let failures: HandoffLimiter
    /// Hand-offs stored through the API per relay client.
    let puts: HandoffLimiter
    let audit: AuditLog
    /// A refused take costs its sender nothing: one audit row per realm and reason a minute.
    let refusals: RefusalAuditSampler
    let settings: BrokerSettingsStore
    let clock: any KeywardClock
    /// Where a storage failure behind a 503 is told: the caller only learns to retry.
    let logger: Logger
    var maxLive = Self.maxLivePerClient

    /// Hand-offs one client may have waiting at once: a relay page looped by a script fills its client's share, not
    /// the database.
    static let maxLivePerClient = 1000
    static let defaultLifetime = TimeInterval(BrokerSettings().handoffLifetimeSeconds)
    static let maxLifetime = TimeInterval(BrokerSettings.handoffSeconds.upperBound)
    /// A relay client's own blob (an Internet Identity delegation chain is a few KiB).
    static let maxBlobSize = 64 * 1024

    /// Stores `blob` for the holder of the key `jkt`; returns the code.
    func put(
        realm: String, clientId: String, nonce: String, jkt: String, kind: Handoff.Kind, blob: String, lifetime: TimeInterval = defaultLifetime
    ) async throws -> String {
        let code = Base64URL.encode(SecureRandom.bytes(16))
        let now = clock.now()
        let handoff = Handoff(
            codeHash: Handoff.digest(code), realm: realm, clientId: clientId, nonceHash: Handoff.digest(nonce), jkt: jkt, kind: kind, blob: blob,
            createdAt: now, expiresAt: now.addingTimeInterval(min(lifetime, Self.maxLifetime))
        )
        let stored: Bool
        do {
            stored = try await store.insert(handoff, maxLive: maxLive, now: now)
        } catch {
            throw unavailable("storing a hand-off", error)
        }
        guard stored else {
            await recordRefusal(realm: realm, clientId: clientId, reason: ErrorCode.handoffLimit.rawValue, now: now)
            throw APIError(
                .tooManyRequests, .handoffLimit, "client '\(clientId)' has \(maxLive) hand-offs waiting; retry once some are taken or expire"
            )
        }
        return code
    }

    /// A relay client's own blob for the holder of the key `jkt` (`POST …/v1/broker/handoff`); returns the code.
    /// `lifetime` nil: the realm's `handoffLifetimeSeconds`.
    func putBlob(
        realm: String, client: OAuthClient, nonce: String, jkt: String, blob: String, lifetime: TimeInterval?
    ) async throws -> (code: String, lifetime: TimeInterval) {
        guard client.broker, !client.isPublic else {
            throw APIError(.forbidden, .unauthorizedClient, "client '\(client.clientId)' is not a confidential client registered with --broker")
        }
        let now = clock.now()
        if let retryAfter = puts.refusal(client.clientId, now: now) {
            throw APIError(.tooManyRequests, .tooManyAttempts, "client '\(client.clientId)' stored \(puts.limit) hand-offs this minute; retry in \(retryAfter) s")
        }
        puts.count(client.clientId, now: now)
        let waits: TimeInterval
        if let lifetime { waits = lifetime } else { waits = try await settings.settings(realm: realm).handoffLifetime }
        let code = try await put(realm: realm, clientId: client.clientId, nonce: nonce, jkt: jkt, kind: .blob, blob: blob, lifetime: waits)
        return (code, min(waits, Self.maxLifetime))
    }

    /// The hand-off, deleted as it is returned; `address` is the caller's, whose failed takes are limited.
    func take(realm: String, code: String, nonce: String, jkt: String, address: String) async throws -> Handoff {
        let now = clock.now()
        if let retryAfter = failures.refusal(address, now: now) {
            throw APIError(.tooManyRequests, .tooManyAttempts, "too many failed hand-off takes from this address; retry in \(retryAfter) s")
        }
        let taken: Handoff?
        do {
            taken = try await store.take(realm: realm, codeHash: Handoff.digest(code), jkt: jkt)
        } catch {
            throw unavailable("taking a hand-off", error)
        }
        // Deleted already: a wrong nonce or a late take has burnt the code.
        guard let taken, ConstantTime.equal(taken.nonceHash, Handoff.digest(nonce)), taken.expiresAt > now else {
            failures.count(address, now: now)
            let reason = taken == nil ? "unknown_code_or_key" : taken!.expiresAt <= now ? "expired" : "nonce_mismatch"
            await recordRefusal(realm: realm, clientId: taken?.clientId, reason: reason, now: now)
            throw Self.invalid
        }
        return taken
    }

    static let invalid = APIError(
        .badRequest, .handoffInvalid, "the hand-off cannot be taken: the code, the nonce or the proof's key is wrong, or it was taken already or has expired"
    )
    static let unavailable = APIError(.serviceUnavailable, .unavailable, "hand-offs cannot be stored or read right now; retry shortly")

    private func unavailable(_ operation: String, _ error: any Error) -> APIError {
        logger.error("hand-off storage failed", metadata: ["operation": "\(operation)", "error": "\(String(reflecting: error))"])
        return Self.unavailable
    }

    private func recordRefusal(realm: String, clientId: String?, reason: String, now: Date) async {
        guard let folded = refusals.admit(.init(realm: realm, reason: reason), now: now) else { return }
        var details = ["reason": reason]
        if folded > 0 { details["suppressed"] = String(folded) }
        await audit.record(.handoffRefused, realm: realm, userId: nil, clientId: clientId, details: details)
    }
}
