// What a directory says about a user beside the user name: names, e-mail addresses, phone numbers, the enterprise
// attributes — kept by Accounts, written by SCIM (issue 33).
import Foundation

/// A user's profile. The fields are SCIM's core and enterprise user attributes that Keyward keeps; an empty
/// profile is a user no directory has described.
public struct UserProfile: Sendable, Equatable {
    public struct Name: Sendable, Equatable {
        public var formatted: String?
        public var familyName: String?
        public var givenName: String?
        public var middleName: String?
        public var honorificPrefix: String?
        public var honorificSuffix: String?

        public init(
            formatted: String? = nil, familyName: String? = nil, givenName: String? = nil, middleName: String? = nil,
            honorificPrefix: String? = nil, honorificSuffix: String? = nil
        ) {
            (self.formatted, self.familyName, self.givenName, self.middleName) = (formatted, familyName, givenName, middleName)
            (self.honorificPrefix, self.honorificSuffix) = (honorificPrefix, honorificSuffix)
        }
    }

    /// An e-mail address or a phone number, with its kind (`work`, `home`, …) and whether it is the primary one.
    public struct Contact: Sendable, Equatable {
        public var value: String
        public var type: String?
        public var primary: Bool

        public init(value: String, type: String? = nil, primary: Bool = false) {
            (self.value, self.type, self.primary) = (value, type, primary)
        }
    }

    /// A postal address (RFC 7643 §4.1.2).
    public struct Address: Sendable, Equatable {
        public var formatted: String?
        public var streetAddress: String?
        public var locality: String?
        public var region: String?
        public var postalCode: String?
        public var country: String?
        public var type: String?
        public var primary: Bool

        public init(
            formatted: String? = nil, streetAddress: String? = nil, locality: String? = nil, region: String? = nil, postalCode: String? = nil,
            country: String? = nil, type: String? = nil, primary: Bool = false
        ) {
            (self.formatted, self.streetAddress, self.locality, self.region) = (formatted, streetAddress, locality, region)
            (self.postalCode, self.country, self.type, self.primary) = (postalCode, country, type, primary)
        }
    }

    /// The enterprise extension (RFC 7643 §4.3); `managerId` is the id of another user of the realm, as the directory sent it.
    public struct Enterprise: Sendable, Equatable {
        public var employeeNumber: String?
        public var costCenter: String?
        public var organization: String?
        public var division: String?
        public var department: String?
        public var managerId: String?

        public init(
            employeeNumber: String? = nil, costCenter: String? = nil, organization: String? = nil, division: String? = nil,
            department: String? = nil, managerId: String? = nil
        ) {
            (self.employeeNumber, self.costCenter, self.organization) = (employeeNumber, costCenter, organization)
            (self.division, self.department, self.managerId) = (division, department, managerId)
        }
    }

    /// The directory's own id for the user (SCIM `externalId`), compared exactly.
    public var externalId: String?
    public var displayName: String?
    public var nickName: String?
    public var title: String?
    public var userType: String?
    public var preferredLanguage: String?
    public var locale: String?
    public var timezone: String?
    public var name: Name?
    public var emails: [Contact] = []
    public var phoneNumbers: [Contact] = []
    public var addresses: [Address] = []
    public var enterprise: Enterprise?

    public init() {}

    public var isEmpty: Bool { self == UserProfile() }
}

/// SCIM compares user names and e-mail addresses without regard to case; Keyward folds ASCII letters only, alike in
/// Swift and on both engines (`UserProfileSchemaMigration`), so `Bjensen` finds `bjensen` but `Ö` does not find `ö`.
enum UserNameFolding {
    static func folded(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
            (0x41...0x5A).contains(scalar.value) ? Unicode.Scalar(scalar.value + 0x20)! : scalar
        }))
    }

    /// `expression` folded the same way in SQL.
    static func sql(_ expression: String, engine: DatabaseEngine) -> String {
        engine == .postgres ? "translate(\(expression), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')" : "lower(\(expression))"
    }
}
