/// One numbered schema change. Versions are applied in ascending order, each in its own transaction,
/// and never change once released: a fix is a new migration.
public struct SchemaMigration: Sendable, Equatable {
    public let version: Int
    public let name: String
    /// The DDL statements for an engine. DDL may differ per engine (BLOB vs BYTEA); queries may not.
    let statements: @Sendable (DatabaseEngine) -> [String]

    init(version: Int, name: String, statements: @escaping @Sendable (DatabaseEngine) -> [String]) {
        self.version = version
        self.name = name
        self.statements = statements
    }

    public static func == (lhs: SchemaMigration, rhs: SchemaMigration) -> Bool {
        lhs.version == rhs.version && lhs.name == rhs.name
    }

    /// Every migration Keyward knows, in order.
    public static let all: [SchemaMigration] = [
        InitialSchemaMigration.migration,
        PushMFASchemaMigration.migration,
        BrowserSessionSchemaMigration.migration,
        LoginThrottleSchemaMigration.migration,
        ChallengeNotifySchemaMigration.migration,
        ChallengeNotifyStatusSchemaMigration.migration,
        LoginChallengeFunctionSchemaMigration.migration,
        HostTokenSchemaMigration.migration,
        DeviceSchemaMigration.migration,
        DeviceAttestedSchemaMigration.migration,
        IdentityProviderSchemaMigration.migration,
        AppleRevocationSchemaMigration.migration,
        NewAccountSchemaMigration.migration,
        SingleUseSweepSchemaMigration.migration,
    ]
}

/// Column types that are spelled differently per engine.
struct EngineColumnTypes {
    let bytes: String

    init(_ engine: DatabaseEngine) {
        switch engine {
        case .sqlite: bytes = "BLOB"
        case .postgres: bytes = "BYTEA"
        }
    }
}
