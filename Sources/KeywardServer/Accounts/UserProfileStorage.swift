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
        var object = members(texts, of: profile)
        if let name = profile.name { object["name"] = .object(members(nameTexts, of: name)) }
        object["emails"] = .array(profile.emails.map(contact))
        object["phoneNumbers"] = .array(profile.phoneNumbers.map(contact))
        object["addresses"] = .array(profile.addresses.map { address in
            var stored = members(addressTexts, of: address)
            stored["primary"] = .bool(address.primary)
            return .object(stored)
        })
        if let enterprise = profile.enterprise { object["enterprise"] = .object(members(enterpriseTexts, of: enterprise)) }
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
        var profile = try stored.read(texts, into: UserProfile())
        profile.name = try stored.object("name").map { try $0.read(nameTexts, into: UserProfile.Name()) }
        profile.emails = try stored.objects("emails").map(contact)
        profile.phoneNumbers = try stored.objects("phoneNumbers").map(contact)
        profile.addresses = try stored.objects("addresses").map { stored in
            var address = try stored.read(addressTexts, into: UserProfile.Address())
            address.primary = try stored.flag("primary") ?? false
            return address
        }
        profile.enterprise = try stored.object("enterprise").map { try $0.read(enterpriseTexts, into: UserProfile.Enterprise()) }
        return profile
    }

    /// The text members of each stored object, by key: one list serves writing and reading, so the two cannot drift.
    /// Built once: every SCIM read and create goes through them.
    private typealias Texts<Value> = [(key: String, path: any WritableKeyPath<Value, String?> & Sendable)]

    private static let texts: Texts<UserProfile> = [
        ("externalId", \.externalId), ("displayName", \.displayName), ("nickName", \.nickName), ("title", \.title),
        ("userType", \.userType), ("preferredLanguage", \.preferredLanguage), ("locale", \.locale), ("timezone", \.timezone),
    ]

    private static let nameTexts: Texts<UserProfile.Name> = [
        ("formatted", \.formatted), ("familyName", \.familyName), ("givenName", \.givenName), ("middleName", \.middleName),
        ("honorificPrefix", \.honorificPrefix), ("honorificSuffix", \.honorificSuffix),
    ]

    private static let addressTexts: Texts<UserProfile.Address> = [
        ("formatted", \.formatted), ("streetAddress", \.streetAddress), ("locality", \.locality), ("region", \.region),
        ("postalCode", \.postalCode), ("country", \.country), ("type", \.type),
    ]

    private static let enterpriseTexts: Texts<UserProfile.Enterprise> = [
        ("employeeNumber", \.employeeNumber), ("costCenter", \.costCenter), ("organization", \.organization),
        ("division", \.division), ("department", \.department), ("managerId", \.managerId),
    ]

    /// The members of `texts` that `value` has, left out when nil.
    private static func members<Value>(_ texts: Texts<Value>, of value: Value) -> JSONObject {
        var object = JSONObject()
        for (key, path) in texts {
            if let text = value[keyPath: path] { object[key] = .string(text) }
        }
        return object
    }

    private static func contact(_ contact: UserProfile.Contact) -> JSONValue {
        var stored: JSONObject = ["value": .string(contact.value), "primary": .bool(contact.primary)]
        if let type = contact.type { stored["type"] = .string(type) }
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

        /// `value` with each member of `texts` read into it.
        func read<Value>(_ texts: Texts<Value>, into value: Value) throws -> Value {
            var value = value
            for (key, path) in texts { value[keyPath: path] = try text(key) }
            return value
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
