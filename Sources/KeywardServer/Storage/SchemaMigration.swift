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

    /// One part's share of a numbered migration: the statements that create or change its own tables. A migration
    /// whose statements touch several parts' tables is declared in pieces, each by its part, and `assemble` puts
    /// them back in `order`, so the statements run are the released ones, byte for byte (`MigrationHistoryTests`).
    struct Piece: Sendable {
        let version: Int
        let name: String
        /// Where this piece's statements go among the version's pieces, from 0.
        let order: Int
        let statements: @Sendable (DatabaseEngine) -> [String]

        init(version: Int, name: String, order: Int = 0, statements: @escaping @Sendable (DatabaseEngine) -> [String]) {
            self.version = version
            self.name = name
            self.order = order
            self.statements = statements
        }
    }

    /// The migrations `pieces` make, in version order. Pieces of one version must agree on its name and take
    /// distinct places; a version with a gap in its places is a mistake, not a migration.
    static func assemble(_ pieces: [Piece]) -> [SchemaMigration] {
        Dictionary(grouping: pieces, by: \.version).sorted { $0.key < $1.key }.map { version, pieces in
            let ordered = pieces.sorted { $0.order < $1.order }
            precondition(ordered.map(\.order) == Array(0..<ordered.count), "migration \(version): pieces must take places 0, 1, 2, … once each")
            precondition(Set(ordered.map(\.name)).count == 1, "migration \(version): its pieces disagree on its name")
            let parts = ordered.map(\.statements)
            return SchemaMigration(version: version, name: ordered[0].name) { engine in parts.flatMap { $0(engine) } }
        }
    }
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
