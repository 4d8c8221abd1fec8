// The admin API's host-token issuers: list, register, read, change, remove, enrol users (`keyward issuers`).
import Foundation
import Hummingbird
import KeywardJOSE

/// `/admin/realms/{realm}/issuers…`. An issuer is named in paths by `id`, the base64url of its `iss` (a URL does
/// not fit in one path segment).
struct AdminIssuerRoutes {
    let issuers: HostIssuerService
    let maxBodySize: Int

    /// How many enterprise ids one enrolment call takes.
    static let maxEnrollment = 1000

    func register(on realm: RouterGroup<KeywardRequestContext>) {
        realm.get("issuers") { request, context in
            try context.admin.require(.issuersRead)
            let page = try AdminPage(request)
            return page.response(all: try await issuers.list(realm: try context.realm.name), key: \.issuer, render: AdminIssuerBody.init, request: request)
        }
        realm.post("issuers") { request, context in
            try context.admin.require(.issuersWrite)
            try context.admin.require(.usersWrite, vouching: true)
            var input = try await AdminRequestBody.read(request, maxSize: maxBodySize)
            var registration = HostIssuerService.Registration(realm: try context.realm.name, issuer: try input.requiredString("issuer", maxLength: 512))
            try Self.apply(&input, to: &registration)
            try input.finish()
            let added = try await issuers.add(registration)
            return AdminJSON.make(AdminIssuerBody(added), status: .created, headers: [
                .location: request.uri.path + "/" + AdminIssuerBody.id(added.issuer), .cacheControl: "no-store",
            ])
        }
        realm.get("issuers/:issuerId") { _, context in
            try context.admin.require(.issuersRead)
            return AdminJSON.make(AdminIssuerBody(try await existing(context)), headers: [.cacheControl: "no-store"])
        }
        realm.patch("issuers/:issuerId") { request, context in
            try context.admin.require(.issuersWrite)
            try context.admin.require(.usersWrite, vouching: true)
            let issuer = try await existing(context).issuer
            var input = try await AdminRequestBody.read(request, maxSize: maxBodySize)
            var changes = HostIssuerService.Registration(realm: "", issuer: issuer)
            let given = try Self.apply(&input, to: &changes)
            try input.finish()
            let updated = try await issuers.update(realm: try context.realm.name, issuer: issuer) { registration in
                given.apply(changes, to: &registration)
            }
            return AdminJSON.make(AdminIssuerBody(updated), headers: [.cacheControl: "no-store"])
        }
        realm.delete("issuers/:issuerId") { _, context in
            try context.admin.require(.issuersWrite)
            _ = try await issuers.remove(realm: try context.realm.name, issuer: try await existing(context).issuer)
            return Response(status: .noContent)
        }
        realm.post("issuers/:issuerId/enrollments") { request, context in
            try context.admin.require(.issuersWrite)
            try context.admin.require(.usersWrite)
            let issuer = try await existing(context).issuer
            var input = try await AdminRequestBody.read(request, maxSize: maxBodySize)
            let subjects = try input.strings("subjects", maxCount: Self.maxEnrollment, maxLength: 1024) ?? []
            try input.finish()
            guard !subjects.isEmpty else { throw AdminProblem.invalid("subjects must name at least one enterprise id", field: "subjects") }
            let results = try await issuers.enroll(realm: try context.realm.name, issuer: issuer, subjects: subjects)
            return AdminJSON.whole(results, AdminEnrollmentBody.init)
        }
    }

    private func existing(_ context: KeywardRequestContext) async throws -> HostIssuer {
        let id = context.parameters.get("issuerId") ?? ""
        let realm = try context.realm.name
        guard id.utf8.count <= 700, let bytes = try? Base64URL.decode(id), let issuer = String(validating: bytes, as: UTF8.self),
            let found = try await issuers.list(realm: realm).first(where: { $0.issuer == issuer })
        else { throw AdminProblem.notFound("no issuer with id '\(id.prefix(64))' in realm '\(realm)'") }
        return found
    }

    /// Which members a PATCH gave, so that only those change.
    struct Given: OptionSet {
        let rawValue: Int
        static let jwksURL = Given(rawValue: 1 << 0), pem = Given(rawValue: 1 << 1), algorithms = Given(rawValue: 1 << 2)
        static let maxLifetime = Given(rawValue: 1 << 3), leeway = Given(rawValue: 1 << 4), audience = Given(rawValue: 1 << 5)
        static let requireJTI = Given(rawValue: 1 << 6), allowBearer = Given(rawValue: 1 << 7), clients = Given(rawValue: 1 << 8)

        func apply(_ changes: HostIssuerService.Registration, to registration: inout HostIssuerService.Registration) {
            if contains(.jwksURL) || contains(.pem) { (registration.jwksURL, registration.pemCertificates) = (changes.jwksURL, changes.pemCertificates) }
            if contains(.algorithms) { registration.algorithms = changes.algorithms }
            if contains(.maxLifetime) { registration.maxLifetime = changes.maxLifetime }
            if contains(.leeway) { registration.leeway = changes.leeway }
            if contains(.audience) { registration.audience = changes.audience }
            if contains(.requireJTI) { registration.requireJTI = changes.requireJTI }
            if contains(.allowBearer) { registration.allowBearer = changes.allowBearer }
            if contains(.clients) { registration.clients = changes.clients }
        }
    }

    /// Reads the settings members into `registration`; answers which were there.
    @discardableResult
    private static func apply(_ input: inout AdminRequestBody, to registration: inout HostIssuerService.Registration) throws(AdminProblem) -> Given {
        var given: Given = []
        if let url = try input.string("jwks_url", maxLength: 2048) { (registration.jwksURL, given) = (url, given.union(.jwksURL)) }
        if let pem = try input.string("pem_certificates", maxLength: 65536) { (registration.pemCertificates, given) = (pem, given.union(.pem)) }
        if let algorithms = try input.strings("algorithms", maxCount: 16, maxLength: 16) { (registration.algorithms, given) = (algorithms, given.union(.algorithms)) }
        if let seconds = try input.int("max_lifetime") { (registration.maxLifetime, given) = (seconds, given.union(.maxLifetime)) }
        if let seconds = try input.int("leeway") { (registration.leeway, given) = (seconds, given.union(.leeway)) }
        if let audience = try input.string("audience", maxLength: 512) { (registration.audience, given) = (audience, given.union(.audience)) }
        if let flag = try input.bool("require_jti") { (registration.requireJTI, given) = (flag, given.union(.requireJTI)) }
        if let flag = try input.bool("allow_bearer") { (registration.allowBearer, given) = (flag, given.union(.allowBearer)) }
        if let clients = try input.strings("clients", maxCount: 64, maxLength: 128) {
            (registration.clients, given) = (clients.isEmpty ? nil : clients, given.union(.clients))
        }
        return given
    }
}

struct AdminIssuerBody: Encodable {
    let id: String
    let issuer: String
    let jwksUrl: String?
    let pemCertificates: String?
    let algorithms: [String]
    let maxLifetime: Int
    let leeway: Int
    let audience: String?
    let requireJti: Bool
    let allowBearer: Bool
    let clients: [String]?
    let createdAt: String

    static func id(_ issuer: String) -> String { Base64URL.encode(Array(issuer.utf8)) }

    init(_ issuer: HostIssuer) {
        (id, self.issuer) = (Self.id(issuer.issuer), issuer.issuer)
        switch issuer.keySource {
        case .jwksURL(let url): (jwksUrl, pemCertificates) = (url, nil)
        case .pemCertificates(let pem): (jwksUrl, pemCertificates) = (nil, pem)
        }
        (algorithms, maxLifetime, leeway, audience) = (issuer.algorithms.map(\.rawValue), issuer.maxLifetime, issuer.leeway, issuer.audience)
        (requireJti, allowBearer, clients) = (issuer.requireJTI, issuer.allowBearer, issuer.clients)
        createdAt = issuer.createdAt.formatted(.iso8601)
    }
}

struct AdminEnrollmentBody: Encodable {
    let subject: String
    let outcome: String
    let userId: String?
    let problem: String?

    init(_ enrollment: HostIssuerService.Enrollment) {
        switch enrollment {
        case .enrolled(let user): (subject, outcome, userId, problem) = (user.username, "enrolled", user.id, nil)
        case .alreadyEnrolled(let user): (subject, outcome, userId, problem) = (user.username, "already_enrolled", user.id, nil)
        case .failed(let subject, let problem): (self.subject, outcome, userId, self.problem) = (subject, "failed", nil, problem)
        }
    }
}
