// Checkpointing SQLite's write-ahead log from a thread of its own, off the path of request commits.
import Logging
import NIOPosix
import SQLiteKit

/// Copies the write-ahead log back into the database file from a connection and thread of its own.
///
/// SQLite's automatic checkpoint runs inside whichever commit crosses the threshold, on the statement
/// connection's thread: every request queued behind that commit waited for the copy and its fsyncs, several
/// times a second under load. Here a passive checkpoint (which never blocks readers or writers) runs every
/// `interval` off that path. Under steady writes it never quite catches up, so the log only starts over when a
/// commit crosses `fallbackPages` and checkpoints for itself — by then nearly every page has been copied, so that
/// commit's share is short. The log file therefore grows to about `fallbackPages` pages and is reused from there.
struct SQLiteCheckpointer: Sendable {
    static let interval = Duration.milliseconds(100)
    /// 16,000 pages of 4 KiB: 64 MiB of log before a commit checkpoints for itself.
    static let fallbackPages = 16_000

    private let task: Task<Void, Never>
    private let connection: SQLiteConnection
    private let thread: NIOThreadPool

    /// Starts checkpointing on `connection`, which runs on `thread`; both are the checkpointer's from now on.
    init(connection: SQLiteConnection, thread: NIOThreadPool, logger: Logger) {
        self.connection = connection
        self.thread = thread
        task = Task {
            var failures = 0
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.interval)
                do {
                    _ = try await connection.query("PRAGMA wal_checkpoint(PASSIVE)", [])
                    failures = 0
                } catch where !Task.isCancelled {
                    // Busy or I/O trouble: the statement connections' own checkpoint still bounds the log.
                    failures += 1
                    if failures == 1 || failures % 600 == 0 {
                        logger.warning("SQLite checkpoint failed; retrying", metadata: ["error": "\(error)", "failures": "\(failures)"])
                    }
                } catch {
                    return
                }
            }
        }
    }

    /// Stops the loop. (The last connection to close checkpoints the rest and removes the log.)
    func stop() async throws {
        task.cancel()
        await task.value
        try await connection.close()
        try await thread.shutdownGracefully()
    }
}
