// Tests: database URLs parsed or refused by name, unverified remote PostgreSQL warned about, passwords masked.
import XCTest

@testable import KeywardServer

final class DatabaseConfigurationTests: XCTestCase {
    func testParsesSQLiteForms() throws {
        XCTAssertEqual(try DatabaseConfiguration(url: "sqlite:///var/lib/keyward/keyward.db"), .sqlite(path: "/var/lib/keyward/keyward.db"))
        XCTAssertEqual(try DatabaseConfiguration(url: "sqlite:/abs/keyward.db"), .sqlite(path: "/abs/keyward.db"))
        XCTAssertEqual(try DatabaseConfiguration(url: "sqlite:keyward-data/keyward.db"), .sqlite(path: "keyward-data/keyward.db"))
        XCTAssertEqual(try DatabaseConfiguration(url: "SQLite:rel.db"), .sqlite(path: "rel.db"))
        XCTAssertTrue(try DatabaseConfiguration(url: "sqlite:rel.db").isEmbedded)
    }

    func testParsesPostgresForms() throws {
        let url = "postgres://keyward:s%40cret@db.example:6543/keyward?sslmode=verify-full"
        XCTAssertEqual(try DatabaseConfiguration(url: url), .postgres(url: url))
        XCTAssertEqual(try DatabaseConfiguration(url: "postgresql://u@127.0.0.1/db").engine, .postgres)
        XCTAssertFalse(try DatabaseConfiguration(url: "postgresql://u@127.0.0.1/db").isEmbedded)

        let parsed = try PostgresURL(parsing: url)
        XCTAssertEqual(parsed.host, "db.example")
        XCTAssertEqual(parsed.port, 6543)
        XCTAssertEqual(parsed.username, "keyward")
        XCTAssertEqual(parsed.password, "s@cret")
        XCTAssertEqual(parsed.database, "keyward")
        XCTAssertEqual(parsed.tlsMode, .verifyFull)
        let defaults = try PostgresURL(parsing: "postgres://u@h")
        XCTAssertEqual(defaults.port, 5432)
        XCTAssertNil(defaults.database)
        XCTAssertEqual(defaults.tlsMode, .prefer)
    }

    func testBadURLsNameTheValueAndTheProblem() {
        let cases: [(String, String)] = [
            ("mysql://u@h/db", "unsupported scheme 'mysql'"),
            ("keyward.db", "expected sqlite:PATH"),
            ("", "expected sqlite:PATH"),
            ("sqlite:", "path is empty"),
            ("sqlite://relative.db", "needs an absolute path"),
            ("sqlite:data/", "names a directory"),
            ("postgres://db.example/keyward", "user name is missing"),
            ("postgres://u@:5432/keyward", "host is missing"),
            ("postgres://u@h/a/b", "single database name"),
            ("postgres://u@h/db?sslmode=maybe", "sslmode 'maybe'"),
            ("postgres://u@h/db?pool=3", "unknown parameter 'pool'"),
        ]
        for (value, problem) in cases {
            XCTAssertThrowsError(try DatabaseConfiguration(url: value), value) { error in
                let message = String(describing: error)
                XCTAssertTrue(message.contains("'\(value)'"), "\(message) should name \(value)")
                XCTAssertTrue(message.contains(problem), "\(message) should say \(problem)")
            }
        }
    }

    /// A database reached over the network without `verify-full` is warned about at start-up; loopback and
    /// verified connections are not.
    func testUnverifiedRemotePostgresIsWarnedAbout() throws {
        for mode in ["disable", "prefer", "require", "verify-ca"] {
            let warning = try XCTUnwrap(try DatabaseConfiguration(url: "postgres://keyward@db.example.com/keyward?sslmode=\(mode)").transportWarning, mode)
            XCTAssertTrue(warning.contains("sslmode=\(mode)") && warning.contains("verify-full") && warning.contains("db.example.com"), warning)
        }
        XCTAssertNotNil(try DatabaseConfiguration(url: "postgres://keyward@10.0.0.5/keyward").transportWarning, "the default prefer")
        for quiet in [
            "postgres://keyward@db.example.com/keyward?sslmode=verify-full", "postgres://keyward@127.0.0.1:5432/keyward",
            "postgres://keyward@localhost/keyward?sslmode=disable", "postgres://keyward@[::1]/keyward", "sqlite:/tmp/keyward.db",
        ] {
            XCTAssertNil(try DatabaseConfiguration(url: quiet).transportWarning, quiet)
        }
    }

    func testErrorMasksThePassword() {
        XCTAssertThrowsError(try DatabaseConfiguration(url: "postgres://keyward:hunter2@h/db?sslmode=nope")) { error in
            let message = String(describing: error)
            XCTAssertFalse(message.contains("hunter2"), message)
            XCTAssertTrue(message.contains("postgres://keyward:***@h/db?sslmode=nope"), message)
        }
    }

    /// Nothing listens on the port: open must give up with a clear error instead of waiting forever.
    func testUnreachablePostgresFailsWithinTimeout() async throws {
        let started = ContinuousClock.now
        do {
            let database = try await KeywardDatabase.open(
                .postgres(url: "postgres://keyward@127.0.0.1:1/none?sslmode=disable"), logger: StorageTestHarness.logger, timeout: .seconds(1)
            )
            try? await database.close()
            XCTFail("open should have failed")
        } catch let error as StoreError {
            guard case .unavailable = error else { return XCTFail("unexpected \(error)") }
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(10))
    }
}
