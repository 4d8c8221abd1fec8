// Writing the single-use keys of concurrent requests in one grouped statement, each with its own answer.
import Foundation

/// Single-use keys of concurrent requests written together: while one statement is in flight, the requests that
/// arrive queue, and the next statement records all their keys at once (`GroupCommit`), in one commit. Every DPoP
/// request writes one or two keys; on SQLite, whose commits are one at a time, a statement and a commit per
/// request were the largest cost left after the signatures. A request alone is written at once, and each one
/// returns only once its keys are stored, with its own answer: the grouping changes the cost, never the result.
struct GroupedSingleUseStore: SingleUseStore {
    private let base: any SingleUseStore
    private let writes: GroupCommit<Submission, Result<[Bool], any Error>>

    /// One request's keys. Grouped statements stay well inside both engines' bind-parameter limits: at most
    /// `maxGroup` requests of a few keys each, three parameters per key.
    private struct Submission: Sendable {
        let entries: [SingleUseEntry]
        let now: Date
    }

    static let maxGroup = 64

    /// `writer`: where the group writes run (`KeywardDatabase.writerExecutor`).
    init(base: any SingleUseStore, writer: (any TaskExecutor)? = nil) {
        self.base = base
        writes = GroupCommit(maxGroup: Self.maxGroup, executor: writer) { submissions in
            await Self.write(submissions, to: base)
        }
    }

    func recordOnce(scope: String, key: String, expiresAt: Date, now: Date) async throws -> Bool {
        try await recordEachOnce([SingleUseEntry(scope: scope, key: key, expiresAt: expiresAt)], now: now)[0]
    }

    func recordEachOnce(_ entries: [SingleUseEntry], now: Date) async throws -> [Bool] {
        guard !entries.isEmpty else { return [] }
        return try await writes.submit(Submission(entries: entries, now: now)).get()
    }

    func deleteExpired(now: Date) async throws -> Int {
        try await base.deleteExpired(now: now)
    }

    /// One statement for the group, its keys in arrival order: a key that two requests of the group both bring is
    /// recorded for the first of them only (the store's rule for a repeated key), as if they had come one after the
    /// other; the earliest `now` of the group decides which old rows have expired, so no request sees a row expire
    /// earlier than its own clock says.
    private static func write(_ submissions: [Submission], to base: any SingleUseStore) async -> [Result<[Bool], any Error>] {
        let now = submissions.map(\.now).min() ?? Date()
        do {
            var recorded = try await base.recordEachOnce(submissions.flatMap(\.entries), now: now)[...]
            return submissions.map { submission in
                defer { recorded = recorded.dropFirst(submission.entries.count) }
                return .success(Array(recorded.prefix(submission.entries.count)))
            }
        } catch {
            return submissions.map { _ in .failure(error) }
        }
    }
}
