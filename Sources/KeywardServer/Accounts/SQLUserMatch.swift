// `UserMatch` as SQL, alike on SQLite and PostgreSQL, over `users` joined with `user_profiles p` (and `user_emails e`
// inside `anyEmail`).
import Foundation
import SQLKit

/// Compiles a `UserMatch` into one boolean SQL condition. Every comparison is written to be true or false, never
/// NULL (`COALESCE`), so `not` inverts exactly: `not (displayName eq "x")` includes the users with no display name,
/// as SCIM's `ne` does. Substrings are compared with `substr` / `instr` rather than `LIKE`, whose case rules differ
/// between the engines and whose `%` and `_` a value could carry.
struct SQLUserMatch {
    let engine: DatabaseEngine

    struct Unsupported: Error, CustomStringConvertible {
        let description: String
    }

    func condition(_ match: UserMatch, insideEmail: Bool = false) throws(Unsupported) -> SQLQueryString {
        switch match {
        case .and(let left, let right):
            return "(" + (try condition(left, insideEmail: insideEmail)) + " AND " + (try condition(right, insideEmail: insideEmail)) + ")"
        case .or(let left, let right):
            return "(" + (try condition(left, insideEmail: insideEmail)) + " OR " + (try condition(right, insideEmail: insideEmail)) + ")"
        case .not(let inner):
            return "(NOT " + (try condition(inner, insideEmail: insideEmail)) + ")"
        case .anyEmail(let inner):
            guard !insideEmail else { throw Unsupported(description: "an e-mail condition inside another") }
            return "EXISTS (SELECT 1 FROM user_emails e WHERE e.realm = users.realm AND e.user_id = users.id AND "
                + (try condition(inner, insideEmail: true)) + ")"
        case .present(let attribute):
            try check(attribute, insideEmail: insideEmail)
            return present(attribute)
        case .compare(let attribute, let comparison, let value):
            try check(attribute, insideEmail: insideEmail)
            return try compare(attribute, comparison, value)
        }
    }

    private func check(_ attribute: UserAttribute, insideEmail: Bool) throws(Unsupported) {
        guard attribute.isEmailAttribute == insideEmail else {
            throw Unsupported(description: insideEmail ? "a user attribute inside an e-mail condition" : "an e-mail attribute outside an e-mail condition")
        }
    }

    /// The column, folded where the attribute compares without regard to case.
    private func column(_ attribute: UserAttribute) -> String {
        switch attribute {
        case .id: "users.id"
        case .username: "users.username_folded"
        case .externalId: "p.external_id"
        case .displayName: UserNameFolding.sql("p.display_name", engine: engine)
        case .givenName: UserNameFolding.sql("p.given_name", engine: engine)
        case .familyName: UserNameFolding.sql("p.family_name", engine: engine)
        case .active: "users.enabled"
        case .created: "users.created_at"
        case .emailValue: "e.value_folded"
        case .emailType: UserNameFolding.sql("e.type", engine: engine)
        case .emailPrimary: "e.is_primary"
        }
    }

    private func present(_ attribute: UserAttribute) -> SQLQueryString {
        switch attribute {
        case .id, .username, .active, .created, .emailValue, .emailPrimary: "TRUE"
        default: "COALESCE(\(unsafeRaw: column(attribute)) <> '', FALSE)"
        }
    }

    private func compare(_ attribute: UserAttribute, _ comparison: UserComparison, _ value: UserMatchValue) throws(Unsupported) -> SQLQueryString {
        let column = column(attribute)
        switch value {
        case .null:
            switch comparison {
            case .equal: return "(NOT " + present(attribute) + ")"
            case .notEqual: return present(attribute)
            default: throw Unsupported(description: "null can only be compared with eq or ne")
            }
        case .boolean(let flag):
            guard attribute.isBoolean else { throw Unsupported(description: "a boolean compared with a text or date attribute") }
            switch comparison {
            case .equal: return "\(unsafeRaw: column) = \(bind: flag)"
            case .notEqual: return "\(unsafeRaw: column) <> \(bind: flag)"
            default: throw Unsupported(description: "booleans can only be compared with eq or ne")
            }
        case .date(let date):
            guard attribute == .created else { throw Unsupported(description: "a date compared with an attribute that is not one") }
            let milliseconds = StorageTime.milliseconds(date)
            guard let symbol = Self.symbols[comparison] else { throw Unsupported(description: "dates cannot be compared with co, sw or ew") }
            return "\(unsafeRaw: column) \(unsafeRaw: symbol) \(bind: milliseconds)"
        case .text(let raw):
            guard !attribute.isBoolean, attribute != .created else { throw Unsupported(description: "text compared with a boolean or date attribute") }
            let text = attribute.foldsCase ? UserNameFolding.folded(raw) : raw
            return textComparison(column, comparison, text)
        }
    }

    private static let symbols: [UserComparison: String] = [
        .equal: "=", .notEqual: "<>", .greater: ">", .greaterOrEqual: ">=", .less: "<", .lessOrEqual: "<=",
    ]

    /// The `ORDER BY` key of a page of matches. Filtered on SQLite it is `+column`: SQLite, without statistics, would
    /// rather walk the whole table in key order to skip a sort than look the matches up by the filter's index (a
    /// `userName eq` lookup read all 100,000 users); the unary plus leaves it nothing to skip, so it takes the index
    /// and sorts the few matches. PostgreSQL plans from its statistics.
    func pageOrder(_ column: String, filtered: Bool) -> String {
        filtered && engine == .sqlite ? "+" + column : column
    }

    /// `column` compared with `text` (both folded already where the attribute folds case), never NULL; the
    /// groups' search (`SQLSCIMGroupStore`) compares its columns the same way.
    func textComparison(_ column: String, _ comparison: UserComparison, _ text: String) -> SQLQueryString {
        let length = text.unicodeScalars.count
        if length == 0, [.contains, .startsWith, .endsWith].contains(comparison) { return "(\(unsafeRaw: column) IS NOT NULL)" }
        switch comparison {
        // Equality as `IS NOT NULL AND =` rather than inside COALESCE: as never NULL, and an index on the column
        // serves it (a directory looks every user up by userName or externalId before it writes).
        case .equal: return "(\(unsafeRaw: column) IS NOT NULL AND \(unsafeRaw: column) = \(bind: text))"
        case .notEqual: return "(\(unsafeRaw: column) IS NULL OR \(unsafeRaw: column) <> \(bind: text))"
        case .contains:
            let position = engine == .postgres ? "strpos" : "instr"
            return "COALESCE(\(unsafeRaw: position)(\(unsafeRaw: column), \(bind: text)) > 0, FALSE)"
        case .startsWith:
            return "COALESCE(substr(\(unsafeRaw: column), 1, CAST(\(bind: length) AS INTEGER)) = \(bind: text), FALSE)"
        case .endsWith:
            let tail: SQLQueryString = engine == .postgres
                ? "right(\(unsafeRaw: column), CAST(\(bind: length) AS INTEGER))"
                : "substr(\(unsafeRaw: column), -CAST(\(bind: length) AS INTEGER))"
            return "COALESCE(" + tail + " = \(bind: text), FALSE)"
        case .greater, .greaterOrEqual, .less, .lessOrEqual:
            // Byte order on both engines: PostgreSQL's default collation would follow the locale.
            let collated = engine == .postgres ? column + " COLLATE \"C\"" : column
            return "COALESCE(\(unsafeRaw: collated) \(unsafeRaw: Self.symbols[comparison]!) \(bind: text), FALSE)"
        }
    }
}
