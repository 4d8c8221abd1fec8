// Administering host-token issuers: adding with every setting checked, updating, removing, enrolling users.
import Foundation
import KeywardJOSE

/// The issuer registry's administration (`keyward issuers …`): adding issuers after checking every setting,
/// listing, removing, and enrolling the customer's users by their enterprise ids.
public final class HostIssuerService: Sendable {
    /// What `add` checks and stores; nil and false fields take `HostIssuer`'s defaults.
    public struct Registration: Sendable {
        public var realm: String
        public var issuer: String
        public var jwksURL: String?
        public var pemCertificates: String?
        public var algorithms: [String]?
        public var maxLifetime: Int?
        public var leeway: Int?
        public var audience: String?
        public var requireJTI: Bool
        public var allowBearer: Bool
        /// The client ids allowed to exchange its tokens; nil: any client of the realm.
        public var clients: [String]?

        public init(
            realm: String, issuer: String, jwksURL: String? = nil, pemCertificates: String? = nil, algorithms: [String]? = nil,
            maxLifetime: Int? = nil, leeway: Int? = nil, audience: String? = nil, requireJTI: Bool = true, allowBearer: Bool = false,
            clients: [String]? = nil
        ) {
            self.clients = clients
            self.realm = realm
            self.issuer = issuer
            self.jwksURL = jwksURL
            self.pemCertificates = pemCertificates
            self.algorithms = algorithms
            self.maxLifetime = maxLifetime
            self.leeway = leeway
            self.audience = audience
            self.requireJTI = requireJTI
            self.allowBearer = allowBearer
        }

        /// What `issuer` was registered with.
        public init(_ issuer: HostIssuer) {
            var (jwksURL, pem): (String?, String?) = (nil, nil)
            switch issuer.keySource {
            case .jwksURL(let url): jwksURL = url
            case .pemCertificates(let text): pem = text
            }
            self.init(
                realm: issuer.realm, issuer: issuer.issuer, jwksURL: jwksURL, pemCertificates: pem, algorithms: issuer.algorithms.map(\.rawValue),
                maxLifetime: issuer.maxLifetime, leeway: issuer.leeway, audience: issuer.audience, requireJTI: issuer.requireJTI,
                allowBearer: issuer.allowBearer, clients: issuer.clients
            )
        }
    }

    public enum Enrollment: Sendable, Equatable {
        case enrolled(User)
        case alreadyEnrolled(User)
        case failed(subject: String, problem: String)
    }

    static let maxLifetimeRange = 1...86400
    static let leewayRange = 0...300

    private let store: any HostIssuerStore
    private let directory: HostIssuerDirectory
    private let users: UserService
    private let audit: AuditLog
    private let clock: any KeywardClock

    init(
        store: any HostIssuerStore, directory: HostIssuerDirectory, users: UserService, audit: AuditLog,
        clock: any KeywardClock
    ) {
        self.store = store
        self.directory = directory
        self.users = users
        self.audit = audit
        self.clock = clock
    }

    public func add(_ registration: Registration) async throws -> HostIssuer {
        let issuer = try Self.validated(registration, now: clock.now())
        guard try await store.issuer(realm: issuer.realm, issuer: issuer.issuer) == nil else { throw HostIssuerError.exists(issuer.issuer) }
        // A new issuer starts with no enrolments: an identity left by an enrolment that raced the last `remove` of the
        // same iss must not let its tokens in.
        _ = try await users.unlinkIdentities(realm: issuer.realm, issuer: issuer.issuer, kind: .hostIssuer)
        do {
            try await store.createIssuer(issuer)
        } catch StoreError.conflict {
            throw HostIssuerError.exists(issuer.issuer)
        }
        directory.forget()
        await audit.record(.hostIssuerAdded, realm: issuer.realm, userId: nil, details: ["issuer": issuer.issuer])
        return issuer
    }

    public func list(realm: String) async throws -> [HostIssuer] { try await store.listIssuers(realm: realm) }

    /// Changes an issuer's settings in place (a new certificate, another leeway, the clients it serves), checked as
    /// `add` checks them; its enrolled users stay linked. `change` edits the issuer's current registration.
    public func update(realm: String, issuer: String, _ change: (inout Registration) -> Void) async throws -> HostIssuer {
        guard let current = try await store.issuer(realm: realm, issuer: issuer) else { throw HostIssuerError.notFound(issuer) }
        var registration = Registration(current)
        change(&registration)
        registration.realm = realm
        registration.issuer = issuer
        var updated = try Self.validated(registration, now: clock.now())
        updated.createdAt = current.createdAt
        do {
            try await store.updateIssuer(updated)
        } catch StoreError.notFound {
            throw HostIssuerError.notFound(issuer)
        }
        directory.forget()
        await audit.record(.hostIssuerUpdated, realm: realm, userId: nil, details: ["issuer": issuer])
        return updated
    }

    /// Removes the issuer and the identities it vouched for; the users stay. Returns how many identities went.
    public func remove(realm: String, issuer: String) async throws -> Int {
        guard try await store.issuer(realm: realm, issuer: issuer) != nil else { throw HostIssuerError.notFound(issuer) }
        // Unlinked first: should the removal stop halfway, the issuer is still listed and `remove` can run again,
        // and a later issuer with the same iss never inherits old enrolments.
        let unlinked = try await users.unlinkIdentities(realm: realm, issuer: issuer, kind: .hostIssuer)
        do {
            try await store.deleteIssuer(realm: realm, issuer: issuer)
        } catch StoreError.notFound {
            throw HostIssuerError.notFound(issuer)
        }
        directory.forget()
        users.forgetCachedIdentities()
        await audit.record(.hostIssuerRemoved, realm: realm, userId: nil, details: ["issuer": issuer, "identitiesRemoved": String(unlinked)])
        return unlinked
    }

    /// Makes each enterprise id a user with an identity at `issuer`, its username the id itself. One result per
    /// subject, in order; a subject enrolled already is not an error.
    public func enroll(realm: String, issuer: String, subjects: [String]) async throws -> [Enrollment] {
        guard try await store.issuer(realm: realm, issuer: issuer) != nil else { throw HostIssuerError.notFound(issuer) }
        var results: [Enrollment] = []
        for subject in subjects {
            guard (1...HostTokenVerifier.maxSubjectLength).contains(subject.utf8.count) else {
                results.append(.failed(subject: subject, problem: "an enterprise id is 1-\(HostTokenVerifier.maxSubjectLength) bytes"))
                continue
            }
            do {
                let user = try await users.createExternalUser(realm: realm, username: subject, kind: .hostIssuer, issuer: issuer, subject: subject)
                results.append(.enrolled(user))
            } catch UserError.identityExists(let user) {
                results.append(.alreadyEnrolled(user))
            } catch let error as UserError {
                results.append(.failed(subject: subject, problem: error.description))
            }
        }
        return results
    }

    public func enrolled(realm: String, issuer: String) async throws -> [ExternalIdentity] {
        try await users.identities(realm: realm, issuer: issuer)
    }

    static func validated(_ registration: Registration, now: Date) throws(HostIssuerError) -> HostIssuer {
        let iss = registration.issuer
        guard (1...512).contains(iss.utf8.count), !iss.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .invalidSetting("issuer", "an issuer is 1-512 bytes without control characters")
        }
        let keySource: HostIssuer.KeySource
        switch (registration.jwksURL, registration.pemCertificates) {
        case (let url?, nil):
            try checkJWKSURL(url)
            keySource = .jwksURL(url)
        case (nil, let pem?):
            let certificates = try IssuerCertificates(pem: pem)
            guard let latest = certificates.latestExpiry, latest > now else {
                throw .invalidPEM("every certificate has expired (the last on \(certificates.latestExpiry.map(IssuerCertificates.format) ?? "?"))")
            }
            keySource = .pemCertificates(pem)
        default:
            throw .invalidSetting("key source", "give exactly one of a JWKS URL (--jwks-url) or PEM certificates (--pem-file)")
        }
        var algorithms = HostIssuer.defaultAlgorithms
        if let names = registration.algorithms {
            algorithms = []
            for name in names {
                guard let algorithm = JWSAlgorithm(rawValue: name) else {
                    throw .invalidSetting("algorithms", "'\(name)' is not one of \(JWSAlgorithm.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                if !algorithms.contains(algorithm) { algorithms.append(algorithm) }
            }
            guard !algorithms.isEmpty else { throw .invalidSetting("algorithms", "name at least one algorithm") }
        }
        let maxLifetime = registration.maxLifetime ?? HostIssuer.defaultMaxLifetime
        guard maxLifetimeRange.contains(maxLifetime) else {
            throw .invalidSetting("max-lifetime", "\(maxLifetime) is outside \(maxLifetimeRange.lowerBound)-\(maxLifetimeRange.upperBound) seconds")
        }
        let leeway = registration.leeway ?? HostIssuer.defaultLeeway
        guard leewayRange.contains(leeway) else {
            throw .invalidSetting("leeway", "\(leeway) is outside \(leewayRange.lowerBound)-\(leewayRange.upperBound) seconds")
        }
        if let audience = registration.audience, audience.isEmpty || audience.utf8.count > 512 {
            throw .invalidSetting("audience", "an audience is 1-512 bytes")
        }
        if let clients = registration.clients {
            guard !clients.isEmpty, clients.allSatisfy(ClientService.isValidClientId), clients.allSatisfy({ !$0.contains(",") }) else {
                throw .invalidSetting("clients", "name one or more client ids, comma separated")
            }
        }
        return HostIssuer(
            realm: registration.realm, issuer: iss, keySource: keySource, algorithms: algorithms, maxLifetime: maxLifetime, leeway: leeway,
            audience: registration.audience, requireJTI: registration.requireJTI, allowBearer: registration.allowBearer,
            clients: registration.clients, createdAt: now
        )
    }

    /// https anywhere; http only to this machine (`OutboundURL`).
    static func checkJWKSURL(_ url: String) throws(HostIssuerError) {
        if let problem = OutboundURL.problem(url) { throw .invalidSetting("jwks-url", problem) }
    }
}

public enum HostIssuerError: Error, CustomStringConvertible, Equatable {
    case invalidSetting(String, String)
    case invalidPEM(String)
    case exists(String)
    case notFound(String)

    public var description: String {
        switch self {
        case .invalidSetting(let setting, let problem): "\(setting): \(problem)"
        case .invalidPEM(let problem): "pem-file: \(problem)"
        case .exists(let issuer): "issuer '\(issuer)' is registered already in this realm"
        case .notFound(let issuer): "issuer '\(issuer)' is not registered in this realm"
        }
    }
}
