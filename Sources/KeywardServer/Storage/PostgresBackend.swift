// Opening PostgreSQL through PostgresNIO's connection pool as the database stores use.
import Dispatch
import Logging
import NIOPosix
import PostgresKit
import SQLKit
import Synchronization

/// Opens PostgreSQL through PostgresNIO's `PostgresClient` connection pool.
///
/// The client only leases connections while its `run()` is active, so the backend owns a task running
/// it; closing cancels that task, which closes the pool's connections.
enum PostgresBackend {
    static func open(url: String, logger: Logger) async throws -> OpenedDatabaseBackend {
        let parsed = try PostgresURL(parsing: url)
        let client = PostgresClient(
            configuration: parsed.clientConfiguration(), eventLoopGroup: EventLoopsInTurn(MultiThreadedEventLoopGroup.singleton),
            backgroundLogger: logger
        )
        let runTask = Task { await client.run() }
        let leases = PostgresLeases(client: client, limit: PostgresURL.connectionWait)
        let sql = PostgresClientSQLDatabase(
            leases: leases, statements: parsed.preparedStatements ? PostgresStatementCache() : nil, logger: logger,
            eventLoop: PostgresClient.defaultEventLoopGroup.any()
        )
        return OpenedDatabaseBackend(
            sql: sql,
            close: {
                leases.close()
                runTask.cancel()
                await runTask.value
            },
            listen: { channel, deliver in
                // One pooled connection is held for the whole subscription.
                try await leases.withConnection { connection in
                    try await connection.listen(on: channel) { notifications in
                        for try await notification in notifications { deliver(notification.payload) }
                    }
                }
            }
        )
    }
}

/// An event loop group whose `any()` hands out its loops in turn.
///
/// PostgresClient opens each connection on `group.any()`, which on NIO's own group prefers the calling thread's
/// loop; the pool opens connections from its own loop, so every connection — and every task its replies resume —
/// landed on one thread while the other idled (measured: 80 % of the server's CPU on one of two loops).
final class EventLoopsInTurn: EventLoopGroup, Sendable {
    let group: MultiThreadedEventLoopGroup

    init(_ group: MultiThreadedEventLoopGroup) { self.group = group }

    func next() -> any EventLoop { group.next() }
    func any() -> any EventLoop { group.next() }
    func makeIterator() -> EventLoopIterator { group.makeIterator() }
    func shutdownGracefully(queue: DispatchQueue, _ callback: @escaping @Sendable ((any Error)?) -> Void) {
        group.shutdownGracefully(queue: queue, callback)
    }
}

/// `SQLDatabase` over the pool: each statement leases a connection for its own duration, and
/// `withSession` keeps one connection for the whole closure (what a transaction needs).
struct PostgresClientSQLDatabase: SQLDatabase {
    let leases: PostgresLeases
    let statements: PostgresStatementCache?
    let logger: Logger
    let eventLoop: any EventLoop

    var version: (any SQLDatabaseReportedVersion)? { nil }
    var dialect: any SQLDialect { PostgresDialect() }
    var queryLogLevel: Logger.Level? { .trace }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await self.execute(sql: query, onRow) }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await leases.withConnection { connection in
            var autocommit = session(on: connection)
            autocommit.confirmsCommits = true
            try await autocommit.execute(sql: query, onRow)
        }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await leases.withConnection { connection in
            try await closure(session(on: connection))
        }
    }

    private func session(on connection: PostgresConnection) -> PostgresSessionSQLDatabase {
        PostgresSessionSQLDatabase(connection: connection, statements: statements, logger: logger, queryLogLevel: queryLogLevel)
    }
}

/// Leases pooled connections with a deadline, and answers at once while PostgreSQL is known to be out of reach.
///
/// While PostgreSQL is down the pool keeps trying to connect and never fails a waiting lease, so a request would wait as
/// long as the outage lasts (found by tests/faults/pgrestart.py). Here a lease not granted within `limit` fails with
/// `.unavailable` and marks the database out of reach: from then on statements fail at once, and a background probe
/// asks for a connection until one is granted. So a request waits for at most one deadline, however many statements
/// it has. Once a body has its connection, only `statement_timeout` bounds it.
final class PostgresLeases: Sendable {
    let client: PostgresClient
    let limit: Duration
    /// Where the deadlines run.
    private let eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.any()
    private let unreachable = Atomic<Bool>(false)
    private let closed = Atomic<Bool>(false)
    /// Per connection, how to abandon the statement running on it when it closes; and the connections whose close is
    /// watched already (one callback per connection, not one per statement: its close future keeps every callback).
    private let underway = Mutex<(abandon: [Int: @Sendable () -> Void], watched: Set<Int>)>(([:], []))
    /// How often the probe asks again while PostgreSQL is out of reach.
    static let probeInterval = Duration.milliseconds(250)

    init(client: PostgresClient, limit: Duration) {
        self.client = client
        self.limit = limit
    }

    func withConnection<R>(_ body: @escaping @Sendable (PostgresConnection) async throws -> R) async throws -> R {
        guard !unreachable.load(ordering: .acquiring) else {
            throw StoreError.unavailable("PostgreSQL is out of reach (no connection within \(limit)); retrying in the background")
        }
        return try await lease(body)
    }

    /// Stops the probe; the pool is closing.
    func close() {
        closed.store(true, ordering: .releasing)
    }

    /// Makes `abandon` the answer to `connection` closing while the current statement runs on it.
    private func watch(_ connection: PostgresConnection, abandon: @escaping @Sendable () -> Void) {
        let id = connection.id
        let firstSight = underway.withLock { underway in
            underway.abandon[id] = abandon
            return underway.watched.insert(id).inserted
        }
        guard firstSight else { return }
        connection.closeFuture.whenComplete { [weak self] _ in
            let abandon = self?.underway.withLock { underway -> (@Sendable () -> Void)? in
                underway.watched.remove(id)
                return underway.abandon.removeValue(forKey: id)
            }
            abandon?()
        }
    }

    private func markUnreachable() {
        guard unreachable.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        Task { await probeUntilReachable() }
    }

    private func probeUntilReachable() async {
        while !closed.load(ordering: .acquiring) {
            try? await Task.sleep(for: Self.probeInterval)
            if (try? await lease { _ in true }) == true {
                unreachable.store(false, ordering: .releasing)
                return
            }
        }
    }

    /// Runs `body` on a leased connection, or fails when none is granted within `limit`. The lease runs in a task of
    /// its own that the caller does not wait for once the deadline has passed: the pool does not always give up a
    /// cancelled lease promptly, and a caller waiting for it would hang as long as the outage (tests/faults/pgrestart.py
    /// found exactly that with a task group). A lease granted after its deadline returns the connection unused.
    private func lease<R>(_ body: @escaping @Sendable (PostgresConnection) async throws -> R) async throws -> R {
        let attempt = LeaseAttempt<R>()
        let work = Task {
            do {
                let value = try await client.withConnection { connection in
                    guard attempt.claim(.granted) else { throw CancellationError() }
                    // The pool can hand out a connection PostgreSQL has just closed, and PostgresNIO never answers a
                    // statement sent on it (seen in tests/faults/pgrestart.py at every stop): a statement whose
                    // connection closes under it is answered as unavailable at once.
                    guard !connection.isClosed else { throw StoreError.unavailable("the pool handed out a closed PostgreSQL connection") }
                    watch(connection) {
                        attempt.finish(.failure(StoreError.unavailable("the PostgreSQL connection closed under a statement")))
                        attempt.cancelWork()
                    }
                    defer { underway.withLock { _ = $0.abandon.removeValue(forKey: connection.id) } }
                    return LeaseAttempt<R>.Value(value: try await body(connection))
                }
                attempt.finish(.success(value))
            } catch {
                attempt.finish(.failure(error))
            }
        }
        attempt.adopt(work)
        let deadline = eventLoop.scheduleTask(in: .nanoseconds(Int64(limit / .nanoseconds(1)))) { [weak self] in
            guard attempt.claim(.expired) else { return }
            self?.markUnreachable()
            attempt.finish(.failure(StoreError.unavailable("no PostgreSQL connection could be had within \(self?.limit ?? .zero)")))
            attempt.cancelWork()
        }
        defer { deadline.cancel() }
        return try await withTaskCancellationHandler {
            try await attempt.outcome().value
        } onCancel: {
            // Not granted yet: the caller goes now. Granted: the body is cancelled and answers for itself.
            if attempt.claim(.expired) { attempt.finish(.failure(CancellationError())) }
            attempt.cancelWork()
        }
    }
}

/// One lease's race against its deadline: whichever claims it first (the granted lease, or the expired deadline)
/// decides, and the caller gets one outcome.
private final class LeaseAttempt<R>: Sendable {
    enum Claim: UInt8 {
        case waiting, granted, expired
    }

    /// The body's result, handed from the lease's task to the caller.
    struct Value: @unchecked Sendable {
        let value: R
    }

    private let claimed = Atomic<UInt8>(Claim.waiting.rawValue)
    private let state = Mutex<(outcome: Result<Value, any Error>?, waiter: CheckedContinuation<Value, any Error>?)>((nil, nil))
    private let work = Mutex<(task: Task<Void, Never>?, cancelled: Bool)>((nil, false))

    /// The task running the lease and the body, cancelled by `cancelWork` (also when that came first).
    func adopt(_ task: Task<Void, Never>) {
        let cancelled = work.withLock { work in
            work.task = task
            return work.cancelled
        }
        if cancelled { task.cancel() }
    }

    func cancelWork() {
        let task = work.withLock { work in
            work.cancelled = true
            return work.task
        }
        task?.cancel()
    }

    /// True for the first claim only.
    func claim(_ claim: Claim) -> Bool {
        claimed.compareExchange(expected: Claim.waiting.rawValue, desired: claim.rawValue, ordering: .acquiringAndReleasing).exchanged
    }

    /// The first outcome wins; later ones (the lease's own failure after its deadline) are dropped.
    func finish(_ outcome: Result<Value, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: outcome)
    }

    func outcome() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<Value, any Error>? in
                if let outcome = state.outcome { return outcome }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}
