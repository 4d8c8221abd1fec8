// Tests: server configuration defaults, flag over environment over file precedence, and bad values named.
import Foundation
import KeywardServer
import Logging
import XCTest

final class ConfigurationTests: XCTestCase {
    func testDefaults() async throws {
        let configuration = try await KeywardConfiguration.load(environment: [:])
        XCTAssertEqual(configuration.host, "127.0.0.1")
        XCTAssertEqual(configuration.port, 8080)
        XCTAssertEqual(configuration.resolvedPublicURL, "http://127.0.0.1:8080")
        XCTAssertEqual(configuration.resolvedDatabaseURL, "sqlite:keyward-data/keyward.db")
        XCTAssertEqual(configuration.dpopMaxAge, 120)
        XCTAssertEqual(configuration.sqliteSynchronous, .full)
    }

    func testSQLiteSynchronousIsReadFromTheEnvironmentAndTheFile() async throws {
        let fromEnvironment = try await KeywardConfiguration.load(environment: ["KEYWARD_SQLITE_SYNCHRONOUS": "NORMAL"])
        XCTAssertEqual(fromEnvironment.sqliteSynchronous, .normal)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-\(UUID()).json")
        try Data(#"{"sqlite": {"synchronous": "normal"}}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let fromFile = try await KeywardConfiguration.load(environment: [:], configFile: file.path)
        XCTAssertEqual(fromFile.sqliteSynchronous, .normal)
    }

    func testPrecedenceFlagOverEnvironmentOverFile() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-\(UUID()).json")
        try Data(#"{"port": 9000, "host": "0.0.0.0", "dpop": {"maxAge": 30}, "publicURL": "https://auth.example.com/"}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let configuration = try await KeywardConfiguration.load(
            overrides: ["port": "9100"], environment: ["KEYWARD_HOST": "127.0.0.2", "KEYWARD_PORT": "9050"], configFile: file.path
        )
        XCTAssertEqual(configuration.port, 9100)
        XCTAssertEqual(configuration.host, "127.0.0.2")
        XCTAssertEqual(configuration.dpopMaxAge, 30)
        XCTAssertEqual(configuration.resolvedPublicURL, "https://auth.example.com")
    }

    func testBadValuesNameTheSetting() async throws {
        let cases: [([String: String], String)] = [
            (["KEYWARD_PORT": "eighty"], "KEYWARD_PORT"),
            (["KEYWARD_PORT": "70000"], "KEYWARD_PORT"),
            (["KEYWARD_PUBLIC_URL": "auth.example.com"], "KEYWARD_PUBLIC_URL"),
            (["KEYWARD_PUBLIC_URL": "https://auth.example.com/?x=1"], "KEYWARD_PUBLIC_URL"),
            (["KEYWARD_MASTER_KEY": "c2hvcnQ="], "KEYWARD_MASTER_KEY"),
            (["KEYWARD_LOG_LEVEL": "loud"], "KEYWARD_LOG_LEVEL"),
            (["KEYWARD_DPOP_MAX_AGE": "0"], "KEYWARD_DPOP_MAX_AGE"),
            (["KEYWARD_HOST": " "], "KEYWARD_HOST"),
            (["KEYWARD_DPOP_REQUIRE_NONCE": "sometimes"], "KEYWARD_DPOP_REQUIRE_NONCE"),
            (["KEYWARD_SQLITE_SYNCHRONOUS": "off"], "KEYWARD_SQLITE_SYNCHRONOUS"),
            (["KEYWARD_ACCOUNTS_BCRYPT_COST": "3"], "KEYWARD_ACCOUNTS_BCRYPT_COST"),
            (["KEYWARD_HTTP_CLIENT_PREFIX_V4": "33"], "KEYWARD_HTTP_CLIENT_PREFIX_V4"),
            (["KEYWARD_HTTP_CLIENT_PREFIX_V6": "8"], "KEYWARD_HTTP_CLIENT_PREFIX_V6"),
            (["KEYWARD_DEVICES_PLAY_INTEGRITY_GOOGLE_CALLS_PER_APP_PER_HOUR": "0"], "KEYWARD_DEVICES_PLAY_INTEGRITY_GOOGLE_CALLS_PER_APP_PER_HOUR"),
        ]
        for (environment, variable) in cases {
            do {
                _ = try await KeywardConfiguration.load(environment: environment)
                XCTFail("accepted \(environment)")
            } catch let error as ConfigurationError {
                XCTAssertTrue(error.description.contains(variable), "\(error.description) should name \(variable)")
            }
        }
    }

    func testClientPrefixesAndGoogleCallBudgetsAreRead() async throws {
        let configuration = try await KeywardConfiguration.load(environment: [
            "KEYWARD_HTTP_CLIENT_PREFIX_V4": "24", "KEYWARD_HTTP_CLIENT_PREFIX_V6": "56",
            "KEYWARD_DEVICES_PLAY_INTEGRITY_GOOGLE_CALLS_PER_ADDRESS_PER_HOUR": "5",
            "KEYWARD_DEVICES_PLAY_INTEGRITY_GOOGLE_CALLS_PER_APP_PER_HOUR": "2000",
        ])
        XCTAssertEqual(configuration.clientNetworks, ClientNetworks(prefixV4: 24, prefixV6: 56))
        XCTAssertEqual(configuration.playIntegrityGoogleCallsPerAddressPerHour, 5)
        XCTAssertEqual(configuration.playIntegrityGoogleCallsPerAppPerHour, 2000)
        let defaults = try await KeywardConfiguration.load(environment: [:])
        XCTAssertEqual(defaults.clientNetworks, ClientNetworks(prefixV4: 32, prefixV6: 64))
    }

    func testMissingConfigFileIsAnError() async throws {
        do {
            _ = try await KeywardConfiguration.load(environment: [:], configFile: "/nonexistent/keyward.json")
            XCTFail("accepted a missing file")
        } catch let error as ConfigurationError {
            XCTAssertEqual(error.setting, "config")
        }
    }

    /// A device proof is accepted while its `iat` is within ±dpopIatTolerance of now, so its `jti` must be
    /// remembered for twice that: a shorter memory lets a captured proof replay once it is forgotten.
    func testReplayMemoryShorterThanTheProofWindowIsRefused() async throws {
        do {
            _ = try await KeywardConfiguration.load(environment: ["KEYWARD_PUSH_MFA_DPOP_JTI_TTL": "60"])
            XCTFail("accepted a jti memory of 60 s under a ±120 s window")
        } catch let error as ConfigurationError {
            XCTAssertTrue(error.description.contains("pushMfa.dpopJtiTtl"), error.description)
            XCTAssertTrue(error.description.contains("pushMfa.dpopIatTolerance"), error.description)
            XCTAssertTrue(error.description.contains("240"), "names the smallest value that is safe: \(error.description)")
        }
        let matching = try await KeywardConfiguration.load(environment: ["KEYWARD_PUSH_MFA_DPOP_JTI_TTL": "60", "KEYWARD_PUSH_MFA_DPOP_IAT_TOLERANCE": "30"])
        XCTAssertEqual(matching.pushMfaDpopJtiTTL, 60)

        // A configuration built in code is checked as well, when the server starts.
        try await TestDatabase.withFreshDatabase(.sqlite) { databaseURL, dataDirectory in
            var configuration = KeywardConfiguration()
            configuration.databaseURL = databaseURL
            configuration.dataDirectory = dataDirectory
            configuration.pushMfaDpopIatTolerance = 300
            configuration.pushMfaDpopJtiTTL = 300
            do {
                let runtime = try await KeywardRuntime.start(configuration: configuration, logger: Logger(label: "keyward-test"))
                try await runtime.shutdown()
                XCTFail("started with a jti memory of 300 s under a ±300 s window")
            } catch let error as ConfigurationError {
                XCTAssertEqual(error.setting, "pushMfa.dpopJtiTtl")
            }
        }
    }
}
