// Every migration Keyward knows, as the parts declare them (`KeywardRuntime.partTypes`).
extension SchemaMigration {
    /// Every migration, in order.
    public static var all: [SchemaMigration] { KeywardRuntime.schemaMigrations }
}
