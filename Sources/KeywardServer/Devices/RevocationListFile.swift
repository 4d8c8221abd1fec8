// The operator's copy of Google's attestation status list, re-read when the file changes.
import Foundation
import KeywardAttestation
import Logging
import ServiceLifecycle
import Synchronization

/// The operator's copy of Google's attestation status list (`devices.android.revocationListFile`). Google revokes
/// attestation keys as they leak, so the operator refreshes the file (a cron job replacing it atomically); the server
/// notices a changed file within `checkInterval` and reads it again (security review M3: it had been read at start
/// only). A file that cannot be read or parsed keeps the last good list in force and is logged, so a half-written
/// download never revokes nothing.
final class RevocationListFile: Sendable {
    let path: String
    /// Older than this, the list is probably no longer refreshed; said in the log once a day.
    static let staleAfter: TimeInterval = 7 * 86400

    private struct State {
        var list: RevocationList
        /// Modification time and size of the file the list was read from, or last failed to be read from.
        var seen: FileStamp
        var staleWarningAt: Date?
    }

    struct FileStamp: Equatable {
        var modified: Date
        var size: Int
    }

    enum Reload: Equatable {
        case unchanged
        case reloaded(entries: Int)
        /// The file changed but could not be used; the previous list stays.
        case keptPrevious(problem: String)
    }

    private let state: Mutex<State>
    private let logger: Logger

    /// Reads the file; a file that cannot be read or parsed stops the server with the setting named.
    init(path: String, logger: Logger) throws(ConfigurationError) {
        self.path = path
        self.logger = logger
        do throws(ConfigurationError) {
            let (list, stamp) = try Self.read(path)
            state = Mutex(State(list: list, seen: stamp))
        } catch {
            throw ConfigurationError(setting: Self.setting, problem: error.problem)
        }
    }

    static let setting = "devices.android.revocationListFile"

    /// The list in force.
    var current: RevocationList { state.withLock { $0.list } }

    /// Reads the file again if its modification time or size changed since it was last looked at.
    @discardableResult
    func reloadIfChanged(now: Date) -> Reload {
        let stamp = Self.stamp(path)
        let previous = state.withLock { $0.seen }
        warnIfStale(stamp ?? previous, now: now)
        guard let stamp, stamp != previous else {
            return .unchanged
        }
        do throws(ConfigurationError) {
            let (list, readStamp) = try Self.read(path)
            state.withLock { $0.list = list; $0.seen = readStamp }
            logger.info("reloaded the Android attestation revocation list", metadata: ["file": "\(path)", "entries": "\(list.entries.count)"])
            return .reloaded(entries: list.entries.count)
        } catch {
            // Remember the damaged file's stamp, so it is reported once, not every check.
            state.withLock { $0.seen = stamp }
            logger.error(
                "the Android attestation revocation list could not be reloaded; the previous one stays in force",
                metadata: ["setting": "\(Self.setting)", "problem": "\(error.problem)"]
            )
            return .keptPrevious(problem: error.problem)
        }
    }

    private func warnIfStale(_ stamp: FileStamp, now: Date) {
        guard now.timeIntervalSince(stamp.modified) > Self.staleAfter else { return }
        let due = state.withLock { state in
            guard state.staleWarningAt.map({ now.timeIntervalSince($0) >= 86400 }) ?? true else { return false }
            state.staleWarningAt = now
            return true
        }
        guard due else { return }
        logger.warning(
            "the Android attestation revocation list has not changed for over 7 days; refresh it from Google's status list",
            metadata: ["setting": "\(Self.setting)", "file": "\(path)", "modified": "\(stamp.modified)"]
        )
    }

    private static func stamp(_ path: String) -> FileStamp? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let modified = attributes[.modificationDate] as? Date, let size = attributes[.size] as? Int
        else { return nil }
        return FileStamp(modified: modified, size: size)
    }

    private static func read(_ path: String) throws(ConfigurationError) -> (RevocationList, FileStamp) {
        // The stamp first: a file replaced while it is read is read again at the next check.
        guard let stamp = stamp(path), let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(setting: setting, problem: "\(path) cannot be read")
        }
        guard data.count <= DeviceSettings.maximumFileSize else { throw ConfigurationError(setting: setting, problem: "\(path) is larger than 16 MiB") }
        do throws(AttestationFailure) {
            return (try RevocationList(json: data), stamp)
        } catch {
            throw ConfigurationError(setting: setting, problem: "\(path): \(error.detail)")
        }
    }
}

/// Checks the revocation list file for a change every `interval` until shutdown.
struct RevocationListReloader: Service {
    let file: RevocationListFile
    let clock: any KeywardClock
    let interval: Duration

    func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return  // cancelled: shutting down
                }
                file.reloadIfChanged(now: clock.now())
            }
        }
    }
}

/// Without `devices.android.revocationListFile`, Android Key Attestation accepts keys Google has revoked. Said in
/// the log at the first Android Key Attestation this process verifies, so servers without Android apps stay quiet.
final class MissingRevocationListWarning: Sendable {
    private let logger: Logger
    private let said = Atomic<Bool>(false)

    init(logger: Logger) {
        self.logger = logger
    }

    func androidKeyVerified() {
        guard !said.exchange(true, ordering: .relaxed) else { return }
        logger.warning(
            "an Android Key Attestation was verified without a revocation list: keys Google has revoked are accepted",
            metadata: ["setting": "\(RevocationListFile.setting)"]
        )
    }
}
