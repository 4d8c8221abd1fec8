// Security-relevant events and the audit log that writes them to the audit table, grouped, and to the log.
import Foundation
import KeywardJOSE
import Logging

/// One security-relevant event, as written to the audit table and the log.
public struct AuditEvent: Sendable, Equatable {
    /// The push-MFA event records of the original (docs/PUSH-MFA-PROTOCOL.md §9), under the same names, and Keyward's own
    /// account events.
    public enum EventType: String, Sendable, CaseIterable {
        case challengeCreated = "ChallengeCreated"
        case challengeAccepted = "ChallengeAccepted"
        case challengeDenied = "ChallengeDenied"
        case challengeResponseInvalid = "ChallengeResponseInvalid"
        case enrollmentCompleted = "EnrollmentCompleted"
        case keyRotated = "KeyRotated"
        case keyRotationDenied = "KeyRotationDenied"
        case dpopAuthenticationFailed = "DpopAuthenticationFailed"
        case userLockedOut = "UserLockedOut"
        case credentialRemoved = "CredentialRemoved"
        case userDisabled = "UserDisabled"
        case userEnabled = "UserEnabled"
        case userDeleted = "UserDeleted"
        /// A local user was created (`keyward users create`, the admin API).
        case userCreated = "UserCreated"
        /// A user was renamed over the admin API (`username`: the new name).
        case userUpdated = "UserUpdated"
        /// A write over the admin API succeeded (`method`, `route`: its pattern, `path`); the client is the event's.
        case adminChange = "AdminChange"
        /// An admin API call was refused its credentials or its reach (`reason`: `invalid_token`, `insufficient_scope`,
        /// `realm_forbidden`, …); at most one row per realm and reason a minute, the next carrying how many were folded.
        case adminRefused = "AdminRefused"
        case passwordChanged = "PasswordChanged"
        case externalIdentityLinked = "ExternalIdentityLinked"
        /// The user unlinked one of their provider identities from the account page.
        case externalIdentityUnlinked = "ExternalIdentityUnlinked"
        case hostIssuerAdded = "HostIssuerAdded"
        case hostIssuerUpdated = "HostIssuerUpdated"
        case hostIssuerRemoved = "HostIssuerRemoved"
        case identityProviderAdded = "IdentityProviderAdded"
        /// A person's first sign-in with an identity provider created their user.
        case userSignedUp = "UserSignedUp"
        /// A sign-in completed its first factor (password or provider): `method` says which.
        case userSignedIn = "UserSignedIn"
        /// The user ended one of their browser sessions from the account page.
        case sessionEnded = "SessionEnded"
        /// The user signed out everywhere: every browser session ended.
        case sessionsEndedEverywhere = "SessionsEndedEverywhere"
        /// A sign-in with an identity provider was refused at its callback (`reason`: the stable code); at most one
        /// row per realm and reason a minute, the next carrying how many were folded (`suppressed`).
        case signInRefused = "SignInRefused"
        /// An Apple identity's token was sent to Apple's revocation endpoint (account deleted, or Apple unlinked);
        /// `outcome` is `revoked` or the refusal's code.
        case appleTokenRevoked = "AppleTokenRevoked"
        case identityProviderRemoved = "IdentityProviderRemoved"
        case deviceAppAdded = "DeviceAppAdded"
        case deviceAppRemoved = "DeviceAppRemoved"
        case deviceAppUpdated = "DeviceAppUpdated"
        case deviceRegistered = "DeviceRegistered"
        case deviceRegistrationRefused = "DeviceRegistrationRefused"
        case deviceRequestRefused = "DeviceRequestRefused"
        case deviceKeyRotated = "DeviceKeyRotated"
        case deviceApproved = "DeviceApproved"
        case deviceRejected = "DeviceRejected"
        case deviceRemoved = "DeviceRemoved"
        /// Development traffic for an app that may not have any: a build meant for QA reached production, or someone
        /// is probing for a bypass.
        case devModeRefused = "DevModeRefused"
        /// An authorization code was presented again after its first redemption: the refresh-token family it
        /// started (`family`) was revoked.
        case authorizationCodeReused = "AuthorizationCodeReused"
        /// A rotated refresh token was presented again: its family (`family`) was revoked.
        case refreshTokenReused = "RefreshTokenReused"
        /// A broker hand-off was refused (`reason`: `unknown_code_or_key`, `nonce_mismatch`, `expired`, `handoff_limit`);
        /// at most one row per realm and reason a minute, the next carrying how many were folded (`suppressed`).
        case handoffRefused = "HandoffRefused"
        /// The broker's relay issued a delegation (`session`: the app session it is kept as, `jkt`: its session key,
        /// `days`: its lifetime).
        case delegationIssued = "DelegationIssued"
        /// Passkeys: one registered, renamed or removed; one refused at sign-in for a counter that did not grow.
        case passkeyRegistered = "PasskeyRegistered"
        case passkeyRenamed = "PasskeyRenamed"
        case passkeyRemoved = "PasskeyRemoved"
        case passkeyPossiblyCloned = "PasskeyPossiblyCloned"
        case passkeyRefused = "PasskeyRefused"
        /// A directory token for the realm's SCIM API made (`details`: tokenId, name) or revoked (`details`: token).
        case scimTokenCreated = "ScimTokenCreated"
        case scimTokenRevoked = "ScimTokenRevoked"
        case unknown = "Unknown"
    }

    public var id: String
    public var realm: String
    public var type: EventType
    public var userId: String?
    public var clientId: String?
    /// Event-specific ids and reasons, a JSON object.
    public var detailsJSON: String
    public var createdAt: Date
}

/// Who asked for what a request changes, when it is not the person themselves: a client of the admin API or a
/// directory over SCIM. Set for the request's task (`AuditLog.$actor`), so every event the services record while
/// serving it names that client, without each service being told.
public struct AuditActor: Sendable, Equatable {
    /// The realm the client belongs to: the master realm's when it manages another.
    public var realm: String
    public var clientId: String
    /// `admin-api` or `scim`.
    public var via: String

    public init(realm: String, clientId: String, via: String) {
        (self.realm, self.clientId, self.via) = (realm, clientId, via)
    }
}

/// Which events a read returns, newest first: a page of the admin API's `GET …/audit-events`.
public struct AuditQuery: Sendable {
    public var userId: String?
    public var type: AuditEvent.EventType?
    /// From this instant on (inclusive).
    public var since: Date?
    /// Before this instant.
    public var until: Date?
    /// The last event of the previous page: only events older than it.
    public var before: (createdAt: Date, id: String)?
    public var limit: Int

    public init(userId: String? = nil, type: AuditEvent.EventType? = nil, since: Date? = nil, until: Date? = nil, before: (createdAt: Date, id: String)? = nil, limit: Int = 100) {
        (self.userId, self.type, self.since, self.until, self.before, self.limit) = (userId, type, since, until, before, limit)
    }
}

public protocol AuditStore: Sendable {
    /// Writes the events in one statement: all or none.
    func append(_ events: [AuditEvent]) async throws
    /// Newest first (by time, then id).
    func events(realm: String, query: AuditQuery) async throws -> [AuditEvent]
    /// Deletes events written before `cutoff`; returns how many.
    func deleteEvents(before cutoff: Date) async throws -> Int
}

/// Writes events to the audit table and the log. A failed table write is logged and never fails the request
/// that caused the event: the log line still carries it.
///
/// Concurrent requests' events share table writes (group commit): `record` still returns only once its event
/// is in the table, but under load a few multi-row inserts replace one insert per event.
public struct AuditLog: Sendable {
    let store: any AuditStore
    let clock: any KeywardClock
    let logger: Logger
    let metrics: KeywardMetrics?
    private let writes: GroupCommit<AuditEvent, Void>

    /// Events per insert; far below either engine's limit on bound parameters (7 per event).
    static let maxEventsPerWrite = 256

    /// `writer`: where the grouped inserts run (`KeywardDatabase.writerExecutor`).
    public init(store: any AuditStore, clock: any KeywardClock, logger: Logger, metrics: KeywardMetrics? = nil, writer: (any TaskExecutor)? = nil) {
        self.store = store
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
        writes = GroupCommit(maxGroup: Self.maxEventsPerWrite, executor: writer) { events in
            await Self.store(events, in: store, logger: logger)
        }
    }

    /// One insert for the group; if it fails, each event on its own, so one bad event cannot take the others
    /// with it.
    private static func store(_ events: [AuditEvent], in store: any AuditStore, logger: Logger) async {
        do {
            try await store.append(events)
        } catch {
            guard events.count > 1 else {
                logger.error("audit event not stored", metadata: ["event": "\(events[0].type.rawValue)", "error": "\(error)"])
                return
            }
            for event in events { await Self.store([event], in: store, logger: logger) }
        }
    }

    /// Events waiting behind the insert in flight (tests wait on it instead of sleeping).
    var queuedEvents: Int { writes.queuedCount }

    /// The client of the request being served, if an administrator's.
    @TaskLocal public static var actor: AuditActor?

    public func record(_ type: AuditEvent.EventType, realm: String, userId: String?, clientId: String? = nil, details: [String: String] = [:]) async {
        var (clientId, details) = (clientId, details)
        if let actor = Self.actor {
            clientId = clientId ?? actor.clientId
            details["via"] = actor.via
            if actor.realm != realm { details["clientRealm"] = actor.realm }
        }
        var object = JSONObject()
        for (key, value) in details { object[key] = .string(value) }
        let now = clock.now()
        let event = AuditEvent(
            id: SecureRandom.timeOrderedUUIDString(at: now), realm: realm, type: type, userId: userId, clientId: clientId,
            detailsJSON: String(decoding: StrictJSON.serialize(object), as: UTF8.self), createdAt: now
        )
        var metadata: Logger.Metadata = ["event": "\(type.rawValue)", "realm": "\(realm)"]
        if let userId { metadata["userId"] = "\(userId)" }
        if let clientId { metadata["clientId"] = "\(clientId)" }
        for (key, value) in details { metadata[key] = "\(value)" }
        logger.info("audit", metadata: metadata)
        metrics?.securityEvent(type.rawValue)
        await writes.submit(event)
    }

    public func events(realm: String, userId: String? = nil, limit: Int = 100) async throws -> [AuditEvent] {
        try await store.events(realm: realm, query: AuditQuery(userId: userId, limit: limit))
    }

    public func events(realm: String, query: AuditQuery) async throws -> [AuditEvent] {
        try await store.events(realm: realm, query: query)
    }
}

extension ExpiredRowSweep {
    /// Audit events older than `retention` (`audit.retentionDays`).
    static func auditEvents(_ store: any AuditStore, retention: TimeInterval) -> ExpiredRowSweep {
        ExpiredRowSweep("auditEvents") { now in try await store.deleteEvents(before: now.addingTimeInterval(-retention)) }
    }
}
