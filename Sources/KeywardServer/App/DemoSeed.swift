/// What `--demo` creates, idempotently: realm `demo`, user `test`/`test`, and the confidential client the
/// push-MFA demo apps use (`push-device-client` / `device-client-secret`, DPoP-bound tokens required).
public struct DemoSeed: Sendable {
    public static let realm = "demo"
    public static let username = "test"
    public static let password = "test"
    public static let clientId = "push-device-client"
    public static let clientSecret = "device-client-secret"

    /// Human-readable lines describing what was created or found.
    public var report: [String] = []

    static func apply(realms: RealmService, clients: ClientService, users: UserService) async throws -> DemoSeed {
        var seed = DemoSeed()
        if try await realms.realm(named: realm) == nil {
            _ = try await realms.createRealm(name: realm, displayName: "Keyward demo", demo: true)
            seed.report.append("created realm '\(realm)' (ES256 signing key generated)")
        } else {
            seed.report.append("realm '\(realm)' exists")
        }
        if try await users.user(realm: realm, username: username) == nil {
            _ = try await users.createUser(realm: realm, username: username, password: password)
            seed.report.append("created user '\(username)' with password '\(password)'")
        } else {
            seed.report.append("user '\(username)' exists")
        }
        if try await clients.listClients(realm: realm).contains(where: { $0.clientId == clientId }) {
            seed.report.append("client '\(clientId)' exists")
        } else {
            _ = try await clients.createClient(realm: realm, clientId: clientId, secret: clientSecret, requireDPoP: true)
            seed.report.append("created client '\(clientId)' with secret '\(clientSecret)' (DPoP-bound tokens required)")
        }
        return seed
    }
}
