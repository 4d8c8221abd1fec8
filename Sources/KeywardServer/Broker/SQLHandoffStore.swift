// The broker_handoffs table: a hand-off written under its client's bound, and taken by one DELETE.
import Foundation
import SQLKit

struct SQLHandoffStore: HandoffStore {
    let database: KeywardDatabase

    /// The bound is checked in the insert itself, so a loop of puts cannot slip past a count read before it.
    func insert(_ handoff: Handoff, maxLive: Int, now: Date) async throws -> Bool {
        try await StoreErrorMapping.mapping("insertHandoff", missingParent: "the client of the hand-off is gone") {
            try await database.sql.countingRows("""
                INSERT INTO broker_handoffs (code_hash, realm, client_id, nonce_hash, jkt, kind, blob, created_at, expires_at)
                SELECT \(bind: handoff.codeHash), \(bind: handoff.realm), \(bind: handoff.clientId), \(bind: handoff.nonceHash),
                    \(bind: handoff.jkt), \(bind: handoff.kind.rawValue), \(bind: handoff.blob), \(bind: StorageTime.milliseconds(handoff.createdAt)),
                    \(bind: StorageTime.milliseconds(handoff.expiresAt))
                WHERE (
                    SELECT COUNT(*) FROM broker_handoffs
                    WHERE realm = \(bind: handoff.realm) AND client_id = \(bind: handoff.clientId) AND expires_at > \(bind: StorageTime.milliseconds(now))
                ) < \(bind: maxLive)
                RETURNING code_hash
                """) == 1
        }
    }

    func take(realm: String, codeHash: String, jkt: String) async throws -> Handoff? {
        try await StoreErrorMapping.mapping("takeHandoff") {
            try await database.sql.raw("""
                DELETE FROM broker_handoffs WHERE code_hash = \(bind: codeHash) AND realm = \(bind: realm) AND jkt = \(bind: jkt)
                RETURNING code_hash, realm, client_id, nonce_hash, jkt, kind, blob, created_at, expires_at
                """).first().map(Self.handoff(from:))
        }
    }

    func deleteAll(realm: String, jkt: String) async throws -> Int {
        try await StoreErrorMapping.mapping("deleteKeyHandoffs") {
            try await database.sql.countingRows(
                "DELETE FROM broker_handoffs WHERE realm = \(bind: realm) AND jkt = \(bind: jkt) RETURNING code_hash"
            )
        }
    }

    func deleteExpired(now: Date) async throws -> Int {
        try await StoreErrorMapping.mapping("deleteExpiredHandoffs") {
            try await database.sql.countingRows("""
                DELETE FROM broker_handoffs WHERE expires_at <= \(bind: StorageTime.milliseconds(now)) RETURNING code_hash
                """)
        }
    }

    private static func handoff(from row: any SQLRow) throws -> Handoff {
        let kind = try row.decode(column: "kind", as: String.self)
        guard let known = Handoff.Kind(rawValue: kind) else { throw StoreError.unavailable("hand-off kind '\(kind)' is unknown") }
        return Handoff(
            codeHash: try row.decode(column: "code_hash", as: String.self), realm: try row.decode(column: "realm", as: String.self),
            clientId: try row.decode(column: "client_id", as: String.self), nonceHash: try row.decode(column: "nonce_hash", as: String.self),
            jkt: try row.decode(column: "jkt", as: String.self), kind: known, blob: try row.decode(column: "blob", as: String.self),
            createdAt: StorageTime.date(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            expiresAt: StorageTime.date(milliseconds: try row.decode(column: "expires_at", as: Int64.self))
        )
    }
}
