// The User schemas Keyward publishes (RFC 7643 §4.1, §4.3, §7): only the attributes it keeps.
import KeywardJOSE

/// One attribute definition of a schema, as `GET /Schemas` shows it (RFC 7643 §7).
struct SCIMAttribute: Sendable {
    enum Kind: String, Sendable { case string, boolean, complex, dateTime, reference }
    enum Mutability: String, Sendable { case readOnly, readWrite, immutable, writeOnly }
    enum Returned: String, Sendable { case always, never, `default`, request }

    let name: String
    var type: Kind = .string
    var multiValued = false
    var required = false
    var caseExact = false
    var mutability: Mutability = .readWrite
    var returned: Returned = .default
    var uniqueness = "none"
    var subAttributes: [SCIMAttribute] = []
    var canonicalValues: [String] = []
    var description = ""

    var json: JSONValue {
        var object: JSONObject = [
            "name": .string(name), "type": .string(type.rawValue), "multiValued": .bool(multiValued), "required": .bool(required),
            "caseExact": .bool(caseExact), "mutability": .string(mutability.rawValue), "returned": .string(returned.rawValue),
            "uniqueness": .string(uniqueness), "description": .string(description),
        ]
        if !subAttributes.isEmpty { object["subAttributes"] = .array(subAttributes.map(\.json)) }
        if !canonicalValues.isEmpty { object["canonicalValues"] = .array(canonicalValues.map(JSONValue.string)) }
        if type == .reference { object["referenceTypes"] = .array([.string("User")]) }
        return .object(object)
    }
}

enum SCIMUserSchema {
    static let core = "urn:ietf:params:scim:schemas:core:2.0:User"
    static let enterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"

    private static func text(_ name: String, _ description: String) -> SCIMAttribute {
        SCIMAttribute(name: name, description: description)
    }

    private static func contact(_ name: String, _ description: String) -> SCIMAttribute {
        SCIMAttribute(name: name, type: .complex, multiValued: true, subAttributes: [
            text("value", "The \(description)."), text("type", "Its kind: work, home, other, …"),
            SCIMAttribute(name: "primary", type: .boolean, description: "Whether it is the preferred one; at most one is."),
        ], description: "The user's \(description)es, kept in the order sent.")
    }

    /// The core User schema's attributes Keyward keeps. `userName` is unique in the realm as written; it is
    /// compared (filters) without regard to ASCII case.
    static let coreAttributes: [SCIMAttribute] = [
        SCIMAttribute(name: "userName", required: true, uniqueness: "server", description: "The name the user signs in with."),
        SCIMAttribute(name: "name", type: .complex, subAttributes: [
            text("formatted", "The full name, as displayed."), text("familyName", "The family name."), text("givenName", "The given name."),
            text("middleName", "The middle name(s)."), text("honorificPrefix", "E.g. Ms."), text("honorificSuffix", "E.g. III."),
        ], description: "The user's name in parts."),
        text("displayName", "The name to show for the user."),
        text("nickName", "A casual name."),
        text("title", "The user's title, e.g. Vice President."),
        text("userType", "The relation to the organization, e.g. Employee."),
        text("preferredLanguage", "A language tag, e.g. en-US."),
        text("locale", "A locale, e.g. en-US."),
        text("timezone", "An IANA time zone, e.g. Europe/Berlin."),
        SCIMAttribute(name: "active", type: .boolean, description: "False disables the user: every session and push approval ends."),
        SCIMAttribute(name: "password", mutability: .writeOnly, returned: .never, description: "Sets the user's password; never returned."),
        contact("emails", "e-mail address"),
        contact("phoneNumbers", "phone number"),
        SCIMAttribute(name: "addresses", type: .complex, multiValued: true, subAttributes: [
            text("formatted", "The full address."), text("streetAddress", "Street and number."), text("locality", "City."),
            text("region", "State or region."), text("postalCode", "Postal code."), text("country", "ISO 3166-1 alpha-2 country code."),
            text("type", "Its kind: work, home, other."),
            SCIMAttribute(name: "primary", type: .boolean, description: "Whether it is the preferred one."),
        ], description: "The user's postal addresses."),
    ]

    static let enterpriseAttributes: [SCIMAttribute] = [
        text("employeeNumber", "The organization's number for the user."),
        text("costCenter", "The cost center."),
        text("organization", "The organization."),
        text("division", "The division."),
        text("department", "The department."),
        SCIMAttribute(name: "manager", type: .complex, subAttributes: [
            SCIMAttribute(name: "value", caseExact: true, description: "The manager's id (another user of the realm)."),
            SCIMAttribute(name: "$ref", type: .reference, caseExact: true, mutability: .readOnly, description: "The manager's URI, made from value."),
        ], description: "The user's manager."),
    ]

    /// The Group schema's attributes (RFC 7643 §4.2): members are users of the realm, by id.
    static let groupAttributes: [SCIMAttribute] = [
        SCIMAttribute(name: "displayName", required: true, description: "The group's name."),
        SCIMAttribute(name: "members", type: .complex, multiValued: true, subAttributes: [
            SCIMAttribute(name: "value", caseExact: true, mutability: .immutable, description: "A member's id (a user of the realm)."),
            SCIMAttribute(name: "type", mutability: .immutable, canonicalValues: ["User"], description: "User: groups do not nest."),
            SCIMAttribute(name: "$ref", type: .reference, caseExact: true, mutability: .immutable, description: "The member's URI."),
        ], description: "The group's members."),
    ]
}
