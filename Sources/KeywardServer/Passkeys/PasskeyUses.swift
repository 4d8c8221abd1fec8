// The passkeys' uses of concurrent sign-ins, written together: one statement and one commit for a group.
import Foundation
import SQLKit

/// One sign-in's use of a passkey: its counter moves from `expectedSignCount` to `signCount`.
struct PasskeyUse: Sendable, Equatable {
    let realm: String
    let credentialId: String
    let expectedSignCount: UInt32
    let signCount: UInt32
    let backedUp: Bool
    let userVerified: Bool
    let at: Date
}

/// Writes the uses of concurrent sign-ins in one statement (`GroupCommit`): every passkey sign-in writes one, and
/// with a commit each they queued behind one another on SQLite. Each caller still gets its own answer, the one it
/// would have had alone: whether its use moved the counter.
struct PasskeyUses: Sendable {
    private let writes: GroupCommit<PasskeyUse, Result<Bool, any Error>>

    /// Uses per statement: seven parameters each, well inside both engines' limits.
    static let maxGroup = 64

    init(database: KeywardDatabase) {
        writes = GroupCommit(maxGroup: Self.maxGroup, executor: database.writerExecutor) { uses in
            await Self.write(uses, database)
        }
    }

    func record(_ use: PasskeyUse) async throws -> Bool {
        try await writes.submit(use).get()
    }

    private struct Name: Hashable {
        let realm: String
        let credentialId: String

        init(realm: String, credentialId: String) { (self.realm, self.credentialId) = (realm, credentialId) }
        init(_ use: PasskeyUse) { self.init(realm: use.realm, credentialId: use.credentialId) }
    }

    /// The first use of each passkey in the group goes into the statement. A later one of the same passkey (two
    /// sign-ins with it at once) succeeds as it would have after the first: only when the first moved the counter to
    /// what this one expected, and this one writes the same counter (a synced passkey's 0); otherwise it lost the
    /// race, and its caller is told so.
    private static func write(_ uses: [PasskeyUse], _ database: KeywardDatabase) async -> [Result<Bool, any Error>] {
        var first: [Name: Int] = [:]
        for (index, use) in uses.enumerated() where first[Name(use)] == nil { first[Name(use)] = index }
        let written: Set<Name>
        do {
            written = try await statement(first.values.map { uses[$0] }, database)
        } catch {
            return uses.map { _ in .failure(error) }
        }
        return uses.enumerated().map { index, use in
            let name = Name(use)
            guard let leader = first[name], written.contains(name) else { return .success(false) }
            if leader == index { return .success(true) }
            return .success(uses[leader].signCount == use.expectedSignCount && uses[leader].signCount == use.signCount)
        }
    }

    /// Rows go in key order, as the single-use records do: PostgreSQL locks them in the order given, and two nodes'
    /// groups in opposite orders would wait for each other.
    private static func statement(_ uses: [PasskeyUse], _ database: KeywardDatabase) async throws -> Set<Name> {
        let rows = uses.sorted { ($0.realm, $0.credentialId) < ($1.realm, $1.credentialId) }.map { use in
            SQLQueryString("""
                (\(bind: use.realm), \(bind: use.credentialId), \(bind: Int64(use.expectedSignCount)), \(bind: Int64(use.signCount)),
                    \(bind: use.backedUp), \(bind: use.userVerified), \(bind: StorageTime.milliseconds(use.at)))
                """)
        }
        return try await StoreErrorMapping.mapping("recordPasskeyUses") {
            // VALUES names its columns column1, column2, … on both engines.
            let updated = try await database.sql.raw("""
                UPDATE passkeys SET sign_count = uses.column4, backed_up = uses.column5, user_verified = uses.column6, last_used_at = uses.column7
                FROM (VALUES \(rows.joined(separator: ", "))) AS uses
                WHERE passkeys.realm = uses.column1 AND passkeys.credential_id = uses.column2 AND passkeys.sign_count = uses.column3
                RETURNING passkeys.realm, passkeys.credential_id
                """).all()
            return Set(try updated.map { row in
                Name(realm: try row.decode(column: "realm", as: String.self), credentialId: try row.decode(column: "credential_id", as: String.self))
            })
        }
    }
}
