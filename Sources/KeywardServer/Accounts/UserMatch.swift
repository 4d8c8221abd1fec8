// Which users a search wants: a predicate over what Accounts keeps of a user, compiled to SQL by `SQLUserMatch`.
import Foundation

/// A condition on a realm's users. SCIM's filters are translated into it (`SCIMUserFilter`); other parts could
/// search with it too. Text attributes compare as `UserAttribute.foldsCase` says.
public indirect enum UserMatch: Sendable, Equatable {
    case compare(UserAttribute, UserComparison, UserMatchValue)
    /// The attribute has a value (SCIM `pr`): not null, not empty.
    case present(UserAttribute)
    /// Some e-mail address of the user meets the condition, whose attributes are `emailValue`, `emailType`, `emailPrimary`.
    case anyEmail(UserMatch)
    case and(UserMatch, UserMatch)
    case or(UserMatch, UserMatch)
    case not(UserMatch)
}

public enum UserAttribute: Sendable, Equatable, CaseIterable {
    case id, username, externalId, displayName, givenName, familyName, active, created
    case emailValue, emailType, emailPrimary

    /// Compared without regard to ASCII case (SCIM `caseExact: false`).
    public var foldsCase: Bool {
        switch self {
        case .username, .displayName, .givenName, .familyName, .emailValue, .emailType: true
        default: false
        }
    }

    /// An attribute of one e-mail address, meaningful inside `anyEmail` only.
    public var isEmailAttribute: Bool { [.emailValue, .emailType, .emailPrimary].contains(self) }

    public var isBoolean: Bool { self == .active || self == .emailPrimary }
}

public enum UserComparison: String, Sendable, Equatable, CaseIterable {
    case equal, notEqual, contains, startsWith, endsWith, greater, greaterOrEqual, less, lessOrEqual
}

public enum UserMatchValue: Sendable, Equatable {
    case text(String)
    case boolean(Bool)
    case date(Date)
    /// SCIM `null`: `eq null` is the attribute's absence, `ne null` its presence.
    case null
}

/// A page of a search: how many users match in all, and the ones from `offset`, oldest first.
public struct UserSearchPage: Sendable, Equatable {
    public var total: Int
    public var users: [User]
    /// The profiles of the page's users that have one, by user id.
    public var profiles: [String: UserProfile] = [:]
}
