// Opening PostgreSQL through PostgresNIO's connection pool as the database stores use.
import Dispatch
import Logging
import NIOPosix
import PostgresKit
import SQLKit

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
        let sql = PostgresClientSQLDatabase(
            client: client, statements: parsed.preparedStatements ? PostgresStatementCache() : nil, logger: logger,
            eventLoop: PostgresClient.defaultEventLoopGroup.any()
        )
        return OpenedDatabaseBackend(
            sql: sql,
            close: {
                runTask.cancel()
                await runTask.value
            },
            listen: { channel, deliver in
                // One pooled connection is held for the whole subscription.
                try await client.withConnection { connection in
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
    let client: PostgresClient
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
        try await client.withConnection { connection in
            try await session(on: connection).execute(sql: query, onRow)
        }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await client.withConnection { connection in
            try await closure(session(on: connection))
        }
    }

    private func session(on connection: PostgresConnection) -> any SQLDatabase {
        PostgresSessionSQLDatabase(connection: connection, statements: statements, logger: logger, queryLogLevel: queryLogLevel)
    }
}
