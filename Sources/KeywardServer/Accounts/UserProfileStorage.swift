// A profile as its user_profiles row keeps it: a JSON object keyed by the profile's property names.
import KeywardJOSE

/// The stored form of a `UserProfile`, written and read with KeywardJOSE's parser: Foundation's JSON coders cost a
/// twentieth of a SCIM read's server CPU and a twenty-fifth of a create's. A member left out (absent, or null) reads
/// as its default, so a member a later version adds, or one an earlier version left out, never makes a row
/// unreadable; a member of the wrong type does (`UserProfileStorage.Unreadable`), as no version writes one.
enum UserProfileStorage {
    struct Unreadable: Error, CustomStringConvertible {
        let description: String
    }

    static func encode(_ profile: UserProfile) -> String {
        var object = JSONObject()
        object.set(profile.externalId, "externalId")
        object.set(profile.displayName, "displayName")
        object.set(profile.nickName, "nickName")
        object.set(profile.title, "title")
        object.set(profile.userType, "userType")
        object.set(profile.preferredLanguage, "preferredLanguage")
        object.set(profile.locale, "locale")
        object.set(profile.timezone, "timezone")
        if let name = profile.name {
            var stored = JSONObject()
            stored.set(name.formatted, "formatted")
            stored.set(name.familyName, "familyName")
            stored.set(name.givenName, "givenName")
            stored.set(name.middleName, "middleName")
            stored.set(name.honorificPrefix, "honorificPrefix")
            stored.set(name.honorificSuffix, "honorificSuffix")
            object["name"] = .object(stored)
        }
        object["emails"] = .array(profile.emails.map(contact))
        object["phoneNumbers"] = .array(profile.phoneNumbers.map(contact))
        object["addresses"] = .array(profile.addresses.map { address in
            var stored: JSONObject = ["primary": .bool(address.primary)]
            stored.set(address.formatted, "formatted")
            stored.set(address.streetAddress, "streetAddress")
            stored.set(address.locality, "locality")
            stored.set(address.region, "region")
            stored.set(address.postalCode, "postalCode")
            stored.set(address.country, "country")
            stored.set(address.type, "type")
            return .object(stored)
        })
        if let enterprise = profile.enterprise {
            var stored = JSONObject()
            stored.set(enterprise.employeeNumber, "employeeNumber")
            stored.set(enterprise.costCenter, "costCenter")
            stored.set(enterprise.organization, "organization")
            stored.set(enterprise.division, "division")
            stored.set(enterprise.department, "department")
            stored.set(enterprise.managerId, "managerId")
            object["enterprise"] = .object(stored)
        }
        return String(decoding: StrictJSON.serialize(object), as: UTF8.self)
    }

    static func decode(_ text: String) throws -> UserProfile {
        let object: JSONObject
        do {
            object = try StrictJSON.parseObject(Array(text.utf8))
        } catch {
            throw Unreadable(description: "a stored profile is not a JSON object: \(error)")
        }
        let stored = Stored(object, at: "profile")
        var profile = UserProfile()
        profile.externalId = try stored.text("externalId")
        profile.displayName = try stored.text("displayName")
        profile.nickName = try stored.text("nickName")
        profile.title = try stored.text("title")
        profile.userType = try stored.text("userType")
        profile.preferredLanguage = try stored.text("preferredLanguage")
        profile.locale = try stored.text("locale")
        profile.timezone = try stored.text("timezone")
        profile.name = try stored.object("name").map { name in
            UserProfile.Name(
                formatted: try name.text("formatted"), familyName: try name.text("familyName"), givenName: try name.text("givenName"),
                middleName: try name.text("middleName"), honorificPrefix: try name.text("honorificPrefix"),
                honorificSuffix: try name.text("honorificSuffix")
            )
        }
        profile.emails = try stored.objects("emails").map(contact)
        profile.phoneNumbers = try stored.objects("phoneNumbers").map(contact)
        profile.addresses = try stored.objects("addresses").map { address in
            UserProfile.Address(
                formatted: try address.text("formatted"), streetAddress: try address.text("streetAddress"),
                locality: try address.text("locality"), region: try address.text("region"), postalCode: try address.text("postalCode"),
                country: try address.text("country"), type: try address.text("type"), primary: try address.flag("primary") ?? false
            )
        }
        profile.enterprise = try stored.object("enterprise").map { enterprise in
            UserProfile.Enterprise(
                employeeNumber: try enterprise.text("employeeNumber"), costCenter: try enterprise.text("costCenter"),
                organization: try enterprise.text("organization"), division: try enterprise.text("division"),
                department: try enterprise.text("department"), managerId: try enterprise.text("managerId")
            )
        }
        return profile
    }

    private static func contact(_ contact: UserProfile.Contact) -> JSONValue {
        var stored: JSONObject = ["value": .string(contact.value), "primary": .bool(contact.primary)]
        stored.set(contact.type, "type")
        return .object(stored)
    }

    private static func contact(_ stored: Stored) throws -> UserProfile.Contact {
        guard let value = try stored.text("value") else { throw Unreadable(description: "a stored \(stored.path) has no value") }
        return UserProfile.Contact(value: value, type: try stored.text("type"), primary: try stored.flag("primary") ?? false)
    }

    /// A stored object's members by type; absent and null alike are nil.
    private struct Stored {
        let members: JSONObject
        let path: String

        init(_ members: JSONObject, at path: String) {
            (self.members, self.path) = (members, path)
        }

        func text(_ key: String) throws -> String? {
            switch members[key] {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default: throw Unreadable(description: "stored \(path).\(key) is not a string")
            }
        }

        func flag(_ key: String) throws -> Bool? {
            switch members[key] {
            case nil, .null?: return nil
            case .bool(let flag)?: return flag
            default: throw Unreadable(description: "stored \(path).\(key) is not a boolean")
            }
        }

        func object(_ key: String) throws -> Stored? {
            switch members[key] {
            case nil, .null?: return nil
            case .object(let object)?: return Stored(object, at: "\(path).\(key)")
            default: throw Unreadable(description: "stored \(path).\(key) is not an object")
            }
        }

        func objects(_ key: String) throws -> [Stored] {
            switch members[key] {
            case nil, .null?: return []
            case .array(let items)?:
                return try items.map { item in
                    guard case .object(let object) = item else { throw Unreadable(description: "stored \(path).\(key) holds a value that is not an object") }
                    return Stored(object, at: "\(path).\(key)")
                }
            default: throw Unreadable(description: "stored \(path).\(key) is not an array")
            }
        }
    }
}

private extension Dictionary where Key == String, Value == JSONValue {
    mutating func set(_ text: String?, _ key: String) {
        if let text { self[key] = .string(text) }
    }
}
