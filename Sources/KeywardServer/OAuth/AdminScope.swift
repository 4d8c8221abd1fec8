// What a client may do over the admin API, granted per client and carried in its client_credentials tokens.

/// One permission over the admin API (`/admin/realms/{realm}/…`), granted to a confidential client with
/// `keyward clients create --admin-scope`. A token carries it as `admin:` + the name in its `scope`; the admin API
/// honours it only while the client still holds it, so taking it away (deleting the client) takes effect at once.
public enum AdminScope: String, Sendable, CaseIterable, Comparable {
    case realmsRead = "realms:read"
    case realmsWrite = "realms:write"
    case clientsRead = "clients:read"
    case clientsWrite = "clients:write"
    case usersRead = "users:read"
    case usersWrite = "users:write"
    case providersRead = "providers:read"
    case providersWrite = "providers:write"
    case issuersRead = "issuers:read"
    case issuersWrite = "issuers:write"
    case appsRead = "apps:read"
    case appsWrite = "apps:write"
    case keysRead = "keys:read"
    case keysWrite = "keys:write"
    case auditRead = "audit:read"

    /// The realm whose clients' admin scopes hold on every realm (as Keycloak's `master`).
    public static let masterRealm = "master"

    /// The prefix that marks an admin scope in a token's `scope`; a client's ordinary scopes may not use it.
    public static let tokenPrefix = "admin:"

    /// As an access token's `scope` names it.
    public var tokenScope: String { Self.tokenPrefix + rawValue }

    public static func < (lhs: AdminScope, rhs: AdminScope) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// The admin scopes a token's `scope` claim names.
    public static func inTokenScope(_ scope: String) -> Set<AdminScope> {
        Set(scope.split(separator: " ").compactMap { $0.hasPrefix(tokenPrefix) ? AdminScope(rawValue: String($0.dropFirst(tokenPrefix.count))) : nil })
    }

    /// A list an operator typed (`users:read,users:write` or space-separated); `all` is every scope, `read` every
    /// `…:read` one.
    public static func parse(_ text: String) throws(ClientError) -> Set<AdminScope> {
        var scopes = Set<AdminScope>()
        for word in text.split(whereSeparator: { $0 == "," || $0 == " " }) {
            switch word {
            case "all": scopes.formUnion(allCases)
            case "read": scopes.formUnion(allCases.filter { $0.rawValue.hasSuffix(":read") })
            default:
                guard let scope = AdminScope(rawValue: String(word)) else { throw ClientError.unknownAdminScope(String(word.prefix(64))) }
                scopes.insert(scope)
            }
        }
        return scopes
    }

    /// Stored space-separated, in declaration order; an unknown word (written by a later version) is left out.
    static func stored(_ scopes: Set<AdminScope>) -> String { scopes.sorted().map(\.rawValue).joined(separator: " ") }
    static func fromStored(_ text: String) -> Set<AdminScope> { Set(text.split(separator: " ").compactMap { AdminScope(rawValue: String($0)) }) }
}
