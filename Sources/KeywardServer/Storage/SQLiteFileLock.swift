// The advisory lock beside an embedded database file that keeps `keyward restore` and the file's users apart.
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `<database>.lock`, held with `flock`: shared by every process that has the database open (a server, an admin
/// command, a backup), exclusive by `keyward restore` while it checks a copy and swaps it in. Neither waits: the one
/// that comes second is told who is in the way. The kernel drops the lock when its holder exits, even on SIGKILL.
final class SQLiteFileLock: Sendable {
    enum Mode: Sendable {
        case shared
        case exclusive
    }

    /// -1 once released.
    private let descriptor: Mutex<Int32>

    private init(descriptor: Int32) { self.descriptor = Mutex(descriptor) }

    static func path(forDatabase databasePath: String) -> String { databasePath + ".lock" }

    static func acquire(databasePath: String, mode: Mode) throws -> SQLiteFileLock {
        let lockPath = path(forDatabase: databasePath)
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw StoreError.unavailable("cannot open the lock file \(lockPath): \(String(cString: strerror(errno)))")
        }
        var result: Int32
        repeat {
            result = flock(descriptor, (mode == .shared ? LOCK_SH : LOCK_EX) | LOCK_NB)
        } while result != 0 && errno == EINTR
        guard result == 0 else {
            let busy = errno == EWOULDBLOCK
            let reason = String(cString: strerror(errno))
            close(descriptor)
            guard busy else { throw StoreError.unavailable("cannot lock \(lockPath): \(reason)") }
            switch mode {
            case .shared:
                throw StoreError.unavailable("`keyward restore` is replacing \(databasePath); try again once it has finished")
            case .exclusive:
                throw StoreError.unavailable(
                    "\(databasePath) is in use (a `keyward serve`, a backup or an admin command holds \(lockPath)); stop it first"
                )
            }
        }
        return SQLiteFileLock(descriptor: descriptor)
    }

    func release() {
        descriptor.withLock { descriptor in
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }

    deinit { release() }
}
