// A SCIM filter on Users (RFC 7644 §3.4.2.2) as the `UserMatch` Accounts searches with.
import KeywardHTTPInput

/// Translates filters over the attributes Keyward can search: `id`, `userName`, `externalId`, `displayName`,
/// `name.givenName`, `name.familyName`, `active`, `meta.created`, and `emails` (its `value`, `type` and `primary`,
/// with a value filter `emails[type eq "work" and value co "@example.com"]` too). Anything else is `invalidFilter`,
/// naming the attribute.
enum SCIMUserFilter {
    static func match(_ filter: SCIMFilter) throws(SCIMError) -> UserMatch {
        switch filter {
        case .and(let left, let right): return .and(try match(left), try match(right))
        case .or(let left, let right): return .or(try match(left), try match(right))
        case .not(let inner): return .not(try match(inner))
        case .present(let path):
            return try target(path) { attribute, email in email ? .anyEmail(.present(attribute)) : .present(attribute) }
        case .compare(let path, let op, let value):
            return try target(path) { attribute, email throws(SCIMError) in
                let operand = try matchValue(value, for: attribute, path: path)
                let compared = UserMatch.compare(attribute, op.comparison, operand)
                guard email else { return compared }
                // A user without e-mails has the attribute unassigned, which is null (RFC 7643 §2.5): it matches `eq null`
                // and `ne` anything else, as `SCIMFilter.matches` reads Table 3.
                switch (op, operand) {
                case (.eq, .null): return .not(.anyEmail(.present(attribute)))
                case (.ne, .null): return .anyEmail(.present(attribute))
                case (.ne, _): return .or(.not(.anyEmail(.present(attribute))), .anyEmail(compared))
                default: return .anyEmail(compared)
                }
            }
        case .valuePath(let path, let inner):
            guard isCore(path), SCIMName.equal(path.attribute, "emails"), path.subAttribute == nil else {
                throw unsupported(path.description + "[…]")
            }
            return .anyEmail(try emailMatch(inner))
        }
    }

    /// The condition inside `emails[…]`, whose paths name an e-mail's sub-attributes.
    private static func emailMatch(_ filter: SCIMFilter) throws(SCIMError) -> UserMatch {
        switch filter {
        case .and(let left, let right): return .and(try emailMatch(left), try emailMatch(right))
        case .or(let left, let right): return .or(try emailMatch(left), try emailMatch(right))
        case .not(let inner): return .not(try emailMatch(inner))
        case .present(let path): return .present(try emailAttribute(path))
        case .compare(let path, let op, let value):
            let attribute = try emailAttribute(path)
            return .compare(attribute, op.comparison, try matchValue(value, for: attribute, path: path))
        case .valuePath(let path, _): throw unsupported(path.description + "[…] inside emails[…]")
        }
    }

    private static func emailAttribute(_ path: SCIMAttributePath) throws(SCIMError) -> UserAttribute {
        guard path.schema == nil, path.subAttribute == nil, let attribute = emailAttributes[SCIMName.folded(path.attribute)] else {
            throw unsupported("emails." + path.description)
        }
        return attribute
    }

    private static let emailAttributes: [String: UserAttribute] = ["value": .emailValue, "type": .emailType, "primary": .emailPrimary]

    /// The attribute `path` names; `build` is told whether it is an e-mail's.
    private static func target(
        _ path: SCIMAttributePath, _ build: (UserAttribute, Bool) throws(SCIMError) -> UserMatch
    ) throws(SCIMError) -> UserMatch {
        guard isCore(path) else { throw unsupported(path.description) }
        let name = SCIMName.folded(path.attribute)
        let sub = path.subAttribute.map(SCIMName.folded)
        switch (name, sub) {
        case ("id", nil): return try build(.id, false)
        case ("username", nil): return try build(.username, false)
        case ("externalid", nil): return try build(.externalId, false)
        case ("displayname", nil): return try build(.displayName, false)
        case ("active", nil): return try build(.active, false)
        case ("name", "givenname"): return try build(.givenName, false)
        case ("name", "familyname"): return try build(.familyName, false)
        case ("meta", "created"): return try build(.created, false)
        case ("emails", nil), ("emails", "value"): return try build(.emailValue, true)
        case ("emails", "type"): return try build(.emailType, true)
        case ("emails", "primary"): return try build(.emailPrimary, true)
        default: throw unsupported(path.description)
        }
    }

    private static func isCore(_ path: SCIMAttributePath) -> Bool {
        path.schema.map { SCIMName.equal($0, SCIMUserSchema.core) } ?? true
    }

    private static func matchValue(_ value: SCIMFilterValue, for attribute: UserAttribute, path: SCIMAttributePath) throws(SCIMError) -> UserMatchValue {
        switch value {
        case .null: return .null
        case .boolean(let flag):
            guard attribute.isBoolean else { throw invalid("\(path) is not a boolean") }
            return .boolean(flag)
        case .number: throw invalid("\(path) is not a number")
        case .string(let text):
            if attribute.isBoolean { throw invalid("\(path) is a boolean: compare it with true or false") }
            if attribute == .created {
                guard let date = SCIMDateTime.parse(text) else { throw invalid("\(path) is a dateTime: '\(text)' is not one (RFC 3339)") }
                return .date(date)
            }
            return .text(text)
        }
    }

    private static func unsupported(_ attribute: String) -> SCIMError {
        SCIMError(.badRequest, .invalidFilter, "filtering on '\(attribute)' is not supported; Users filter on id, userName, externalId, displayName, name.givenName, name.familyName, active, meta.created and emails (value, type, primary)")
    }

    private static func invalid(_ detail: String) -> SCIMError {
        SCIMError(.badRequest, .invalidFilter, detail)
    }
}

extension SCIMCompareOperator {
    /// The comparison a search runs for this operator.
    var comparison: UserComparison {
        switch self {
        case .eq: .equal
        case .ne: .notEqual
        case .co: .contains
        case .sw: .startsWith
        case .ew: .endsWith
        case .gt: .greater
        case .ge: .greaterOrEqual
        case .lt: .less
        case .le: .lessOrEqual
        }
    }
}

extension SCIMFilter {
    /// A request's `filter` read, its refusal a SCIM `invalidFilter` error naming the problem and its offset.
    static func read(_ text: String) throws(SCIMError) -> SCIMFilter {
        do throws(SCIMFilterError) {
            return try parse(text)
        } catch {
            throw SCIMError(.badRequest, .invalidFilter, "\(error.message) (at byte \(error.offset) of the filter)")
        }
    }
}
