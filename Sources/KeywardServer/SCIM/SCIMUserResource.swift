// A user as a SCIM User resource (RFC 7643 §4.1, §4.3), and a SCIM User body read into what Accounts keeps.
import Foundation
import KeywardHTTPInput
import KeywardJOSE

/// What a `POST` or `PUT` body (or a `PATCH`ed resource) says a user is.
struct SCIMUserInput: Sendable, Equatable {
    var userName: String
    var active: Bool?
    var password: String?
    var profile: UserProfile
}

enum SCIMUserResource {
    static let maxText = 2048
    static let maxValues = 20

    // MARK: - Rendering

    static func render(_ user: User, profile: UserProfile, base: String) -> JSONObject {
        var resource: JSONObject = [
            "schemas": .array([.string(SCIMUserSchema.core)] + (profile.enterprise == nil ? [] : [.string(SCIMUserSchema.enterprise)])),
            "id": .string(user.id), "userName": .string(user.username), "active": .bool(user.enabled),
            "meta": .object([
                "resourceType": .string("User"), "created": .string(SCIMDateTime.format(user.createdAt)),
                "location": .string(base + "/Users/" + user.id), "version": .string(SCIMVersion.tag(user.revision)),
            ]),
        ]
        let texts: [(String, String?)] = [
            ("externalId", profile.externalId), ("displayName", profile.displayName), ("nickName", profile.nickName), ("title", profile.title),
            ("userType", profile.userType), ("preferredLanguage", profile.preferredLanguage), ("locale", profile.locale),
            ("timezone", profile.timezone),
        ]
        for case let (key, value?) in texts { resource[key] = .string(value) }
        if let name = profile.name {
            resource["name"] = object([
                ("formatted", name.formatted), ("familyName", name.familyName), ("givenName", name.givenName), ("middleName", name.middleName),
                ("honorificPrefix", name.honorificPrefix), ("honorificSuffix", name.honorificSuffix),
            ])
        }
        if !profile.emails.isEmpty { resource["emails"] = .array(profile.emails.map(contact)) }
        if !profile.phoneNumbers.isEmpty { resource["phoneNumbers"] = .array(profile.phoneNumbers.map(contact)) }
        if !profile.addresses.isEmpty {
            resource["addresses"] = .array(profile.addresses.map { address in
                var rendered = object([
                    ("formatted", address.formatted), ("streetAddress", address.streetAddress), ("locality", address.locality),
                    ("region", address.region), ("postalCode", address.postalCode), ("country", address.country), ("type", address.type),
                ])
                if case .object(var members) = rendered { members["primary"] = .bool(address.primary); rendered = .object(members) }
                return rendered
            })
        }
        if let enterprise = profile.enterprise {
            var members: JSONObject = [:]
            for case let (key, value?) in [
                ("employeeNumber", enterprise.employeeNumber), ("costCenter", enterprise.costCenter), ("organization", enterprise.organization),
                ("division", enterprise.division), ("department", enterprise.department),
            ] { members[key] = .string(value) }
            if let manager = enterprise.managerId {
                // `$ref` is not rendered: directories send the id alone and compare what they read back with it.
                members["manager"] = .object(["value": .string(manager)])
            }
            resource[SCIMUserSchema.enterprise] = .object(members)
        }
        return resource
    }

    private static func contact(_ contact: UserProfile.Contact) -> JSONValue {
        var members: JSONObject = ["value": .string(contact.value), "primary": .bool(contact.primary)]
        if let type = contact.type { members["type"] = .string(type) }
        return .object(members)
    }

    private static func object(_ pairs: [(String, String?)]) -> JSONValue {
        var members: JSONObject = [:]
        for case let (key, value?) in pairs { members[key] = .string(value) }
        return .object(members)
    }

    // MARK: - Reading

    /// Reads a User body. Attribute names are matched without regard to case (RFC 7643 §2.1); `id`, `meta` and
    /// `groups` are read-only and ignored (RFC 7644 §3.3); an attribute Keyward does not keep is refused by name
    /// rather than dropped.
    static func read(_ body: JSONObject) throws(SCIMError) -> SCIMUserInput {
        let members = try Members(body, at: nil)
        guard case .array(let schemas)? = members["schemas"], !schemas.isEmpty else {
            throw SCIMError(.badRequest, .invalidSyntax, "'schemas' must list \(SCIMUserSchema.core)")
        }
        var namesCore = false
        for schema in schemas {
            guard let urn = schema.stringValue else { throw SCIMError(.badRequest, .invalidSyntax, "'schemas' holds URNs (strings)") }
            if SCIMName.equal(urn, SCIMUserSchema.core) { namesCore = true } else if !SCIMName.equal(urn, SCIMUserSchema.enterprise) {
                throw SCIMError(.badRequest, .invalidValue, "unknown schema '\(urn)': Users take \(SCIMUserSchema.core) and \(SCIMUserSchema.enterprise)")
            }
        }
        guard namesCore else { throw SCIMError(.badRequest, .invalidValue, "'schemas' must list \(SCIMUserSchema.core)") }
        try members.refuseUnknown(coreNames + [SCIMUserSchema.enterprise, "schemas", "id", "meta", "groups"])

        guard let userName = try members.text("userName"), !userName.isEmpty else {
            throw SCIMError(.badRequest, .invalidValue, "'userName' is required")
        }
        var profile = UserProfile()
        profile.externalId = try members.text("externalId")
        profile.displayName = try members.text("displayName")
        profile.nickName = try members.text("nickName")
        profile.title = try members.text("title")
        profile.userType = try members.text("userType")
        profile.preferredLanguage = try members.text("preferredLanguage")
        profile.locale = try members.text("locale")
        profile.timezone = try members.text("timezone")
        if let name = try members.object("name") {
            let parts = ["formatted", "familyName", "givenName", "middleName", "honorificPrefix", "honorificSuffix"]
            try name.refuseUnknown(parts)
            let read = UserProfile.Name(
                formatted: try name.text("formatted"), familyName: try name.text("familyName"), givenName: try name.text("givenName"),
                middleName: try name.text("middleName"), honorificPrefix: try name.text("honorificPrefix"), honorificSuffix: try name.text("honorificSuffix")
            )
            if read != UserProfile.Name() { profile.name = read }
        }
        profile.emails = try contacts(members, "emails")
        profile.phoneNumbers = try contacts(members, "phoneNumbers")
        profile.addresses = try members.objects("addresses").map { address throws(SCIMError) in
            try address.refuseUnknown(["formatted", "streetAddress", "locality", "region", "postalCode", "country", "type", "primary"])
            return UserProfile.Address(
                formatted: try address.text("formatted"), streetAddress: try address.text("streetAddress"), locality: try address.text("locality"),
                region: try address.text("region"), postalCode: try address.text("postalCode"), country: try address.text("country"),
                type: try address.text("type"), primary: try address.boolean("primary") ?? false
            )
        }
        try onePrimary(profile.addresses.map(\.primary), "addresses")
        if let enterprise = try members.object(SCIMUserSchema.enterprise) {
            // A client may repeat the extension's URN as `schemas` inside it (scim2-models does): nothing to keep.
            try enterprise.refuseUnknown(["employeeNumber", "costCenter", "organization", "division", "department", "manager", "schemas"])
            let read = UserProfile.Enterprise(
                employeeNumber: try enterprise.text("employeeNumber"), costCenter: try enterprise.text("costCenter"),
                organization: try enterprise.text("organization"), division: try enterprise.text("division"),
                department: try enterprise.text("department"), managerId: try managerId(enterprise)
            )
            if read != UserProfile.Enterprise() { profile.enterprise = read }
        }
        return SCIMUserInput(userName: userName, active: try members.boolean("active"), password: try members.text("password"), profile: profile)
    }

    static let coreNames = [
        "userName", "externalId", "name", "displayName", "nickName", "title", "userType", "preferredLanguage", "locale", "timezone",
        "active", "password", "emails", "phoneNumbers", "addresses",
    ]

    private static func contacts(_ members: Members, _ attribute: String) throws(SCIMError) -> [UserProfile.Contact] {
        let read = try members.objects(attribute).map { item throws(SCIMError) in
            // `display` is a label for people (RFC 7643 §2.4), read-only: ignored like `id`.
            try item.refuseUnknown(["value", "type", "primary", "display"])
            guard let value = try item.text("value"), !value.isEmpty else {
                throw SCIMError(.badRequest, .invalidValue, "every value of '\(attribute)' needs a 'value'")
            }
            return UserProfile.Contact(value: value, type: try item.text("type"), primary: try item.boolean("primary") ?? false)
        }
        try onePrimary(read.map(\.primary), attribute)
        return read
    }

    private static func onePrimary(_ flags: [Bool], _ attribute: String) throws(SCIMError) {
        guard flags.filter({ $0 }).count <= 1 else {
            throw SCIMError(.badRequest, .invalidValue, "at most one value of '\(attribute)' may be primary (RFC 7643 §2.4)")
        }
    }

    /// `manager` as `{"value": id}` (RFC 7643 §4.3) or as the id alone, which Entra ID sends.
    private static func managerId(_ enterprise: Members) throws(SCIMError) -> String? {
        switch enterprise["manager"] {
        case nil, .null?: return nil
        case .string(let id)?: return id.isEmpty ? nil : try Members.checked(id, "manager")
        case .object(let object)?:
            let manager = try Members(object, at: "manager")
            try manager.refuseUnknown(["value", "$ref", "displayName"])
            return try manager.text("value").flatMap { $0.isEmpty ? nil : $0 }
        default: throw SCIMError(.badRequest, .invalidValue, "'manager' is an object with the manager's id as 'value'")
        }
    }
}

/// An object's members by name without regard to case, each read as the type its attribute has.
struct Members {
    private let byName: [String: (name: String, value: JSONValue)]
    private let path: String?

    init(_ object: JSONObject, at path: String?) throws(SCIMError) {
        var byName: [String: (name: String, value: JSONValue)] = [:]
        for (name, value) in object {
            let key = SCIMName.folded(name)
            guard byName[key] == nil else { throw SCIMError(.badRequest, .invalidSyntax, "'\(name)' is given twice (names are case-insensitive)") }
            byName[key] = (name, value)
        }
        (self.byName, self.path) = (byName, path)
    }

    subscript(_ name: String) -> JSONValue? { byName[SCIMName.folded(name)]?.value }

    /// The message's `schemas`, which must list `urn` (RFC 7644 §3.1).
    @discardableResult
    func schemas(listing urn: String) throws(SCIMError) -> [JSONValue] {
        guard case .array(let schemas)? = self["schemas"], schemas.contains(where: { $0.stringValue.map { SCIMName.equal($0, urn) } ?? false }) else {
            throw SCIMError(.badRequest, .invalidSyntax, "'schemas' must list \(urn)")
        }
        return schemas
    }

    private func named(_ name: String) -> String { path.map { "\($0).\(name)" } ?? name }

    func refuseUnknown(_ known: [String]) throws(SCIMError) {
        let knownNames = Set(known.map(SCIMName.folded))
        if let unknown = byName.values.map(\.name).sorted().first(where: { !knownNames.contains(SCIMName.folded($0)) }) {
            throw SCIMError(.badRequest, .invalidSyntax, "unknown attribute '\(named(unknown))': Keyward keeps \(path == nil ? "the User attributes GET /Schemas lists" : "the sub-attributes GET /Schemas lists")")
        }
    }

    func text(_ name: String) throws(SCIMError) -> String? {
        switch self[name] {
        case nil, .null?: return nil
        case .string(let text)?: return try Self.checked(text, named(name))
        default: throw SCIMError(.badRequest, .invalidValue, "'\(named(name))' is a string")
        }
    }

    static func checked(_ text: String, _ name: String) throws(SCIMError) -> String {
        guard text.unicodeScalars.count <= SCIMUserResource.maxText else {
            throw SCIMError(.badRequest, .invalidValue, "'\(name)' is longer than \(SCIMUserResource.maxText) characters")
        }
        guard !text.unicodeScalars.contains(where: { $0.value == 0 }) else { throw SCIMError(.badRequest, .invalidValue, "'\(name)' holds a NUL character") }
        return text
    }

    func boolean(_ name: String) throws(SCIMError) -> Bool? {
        switch self[name] {
        case nil, .null?: return nil
        case .bool(let flag)?: return flag
        default: throw SCIMError(.badRequest, .invalidValue, "'\(named(name))' is a boolean (true or false)")
        }
    }

    func object(_ name: String) throws(SCIMError) -> Members? {
        switch self[name] {
        case nil, .null?: return nil
        case .object(let object)?: return try Members(object, at: named(name))
        default: throw SCIMError(.badRequest, .invalidValue, "'\(named(name))' is an object")
        }
    }

    func objects(_ name: String) throws(SCIMError) -> [Members] {
        switch self[name] {
        case nil, .null?: return []
        case .array(let values)?:
            guard values.count <= SCIMUserResource.maxValues else {
                throw SCIMError(.badRequest, .invalidValue, "'\(named(name))' holds more than \(SCIMUserResource.maxValues) values")
            }
            return try values.map { value throws(SCIMError) in
                guard case .object(let object) = value else { throw SCIMError(.badRequest, .invalidValue, "each value of '\(named(name))' is an object") }
                return try Members(object, at: named(name))
            }
        default: throw SCIMError(.badRequest, .invalidValue, "'\(named(name))' is an array")
        }
    }
}

/// `meta.version` and `ETag`: the user's revision as a weak tag, `W/"3"` (RFC 7644 §3.14).
enum SCIMVersion {
    static func tag(_ revision: Int64) -> String { "W/\"\(revision)\"" }
}
