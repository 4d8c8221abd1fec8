// keyward backup and keyward restore: the embedded database copied out while it serves, and a checked copy put back.
import ArgumentParser
import Foundation
import KeywardServer

struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the embedded database to a new file while the server keeps serving.",
        discussion: """
            The copy is one consistent moment of the database (SQLite's VACUUM INTO), written with mode 0600, checked \
            with integrity_check, and given its name only once it is whole. A running server is not paused.

            The master key is not in the copy: keep DATA_DIR/master.key (or KEYWARD_MASTER_KEY) safe and apart from \
            it; `keyward restore` needs it. With PostgreSQL use pg_dump (docs/DEPLOYMENT.md, "Backups").
            """
    )
    @OptionGroup var common: CommonOptions
    @Option(name: .customLong("to"), help: "The file to write (must not exist).") var destination: String

    func run() async throws {
        let configuration = try await common.loadConfiguration()
        let started = ContinuousClock.now
        // Not the database URL: a PostgreSQL one carries its password, and this command is refused for it anyway.
        print("backing up to \(destination) ...")
        let report = try await EmbeddedBackup.backUp(configuration: configuration, to: destination, logger: quietLogger())
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        print("""
            backed up \(report.databasePath) to \(destination): \(report.bytes) bytes, schema version \(report.schemaVersion), \
            integrity checked, in \(String(format: "%.2f", seconds)) s
            the master key is not in the backup: keep \(configuration.masterKey == nil ? configuration.dataDirectory + "/master.key" : "KEYWARD_MASTER_KEY") \
            with it, stored apart
            """)
    }
}

struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace the embedded database with a backup, after checking it.",
        discussion: """
            Refuses while anything has the database open (a `keyward serve`, a backup, an admin command): stop the \
            server first. The backup is checked before anything is replaced: integrity_check, a schema no newer than \
            this build, and realm keys that open with the master key the server will use. That key is \
            --master-key-file (written to DATA_DIR/master.key when the directory has none), else KEYWARD_MASTER_KEY, \
            else DATA_DIR/master.key. The database replaced is kept beside it as <file>.before-restore-<time>.

            With PostgreSQL use pg_restore (docs/DEPLOYMENT.md, "Backups").
            """
    )
    @OptionGroup var common: CommonOptions
    @Option(name: .customLong("from"), help: "The backup file made by `keyward backup`.") var source: String
    @Option(name: .customLong("master-key-file"), help: "The master key the backup was made with (the master.key kept with it).")
    var masterKeyFile: String?

    func run() async throws {
        let configuration = try await common.loadConfiguration()
        print("checking \(source) ...")
        let report = try await EmbeddedBackup.restore(
            configuration: configuration, from: source, masterKeyFile: masterKeyFile, logger: quietLogger()
        )
        print("""
            restored \(source) into \(report.databasePath): schema version \(report.schemaVersion) (now up to date), \
            \(report.realms) realm\(report.realms == 1 ? "" : "s") whose keys open with the master key from \(report.masterKeySource)
            """)
        if let previous = report.previousDatabase { print("the database it replaced is at \(previous)") }
    }
}
