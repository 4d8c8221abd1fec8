// keyward serve: every setting, start-up, and the URLs it prints.
import ArgumentParser
import Foundation
import Hummingbird
import KeywardServer
import Logging
import NIOCore
import NIOPosix

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the Keyward server.",
        discussion: """
            Every setting (flag > environment > JSON config file key):
              host                          KEYWARD_HOST                             listen address (127.0.0.1)
              port                          KEYWARD_PORT                             listen port (8080; 0 = any free port)
              publicURL                     KEYWARD_PUBLIC_URL                       external base URL (http://HOST:PORT); issuers and DPoP htu derive from it
              dataDir                       KEYWARD_DATA_DIR                         embedded database + key file directory (./keyward-data)
              databaseURL                   KEYWARD_DATABASE_URL                     sqlite:PATH (default sqlite:DATA_DIR/keyward.db) or postgres://...
              sqlite.synchronous            KEYWARD_SQLITE_SYNCHRONOUS               full|normal (full: a commit answered survives a power loss)
              masterKey                     KEYWARD_MASTER_KEY                       base64 of 32 bytes sealing private keys; required with PostgreSQL
              log.level                     KEYWARD_LOG_LEVEL                        trace|debug|info|notice|warning|error|critical (info)
              log.format                    KEYWARD_LOG_FORMAT                       auto|json|text (auto: text on a terminal, JSON otherwise)
              dpop.maxAge                   KEYWARD_DPOP_MAX_AGE                     max DPoP proof age at resources, seconds (120)
              dpop.futureSkew               KEYWARD_DPOP_FUTURE_SKEW                 max proof iat in the future at resources (120)
              dpop.tokenEndpointMaxAge      KEYWARD_DPOP_TOKEN_ENDPOINT_MAX_AGE      max proof age at the token endpoint (60)
              dpop.tokenEndpointFutureSkew  KEYWARD_DPOP_TOKEN_ENDPOINT_FUTURE_SKEW  max proof iat in the future at the token endpoint (15)
              dpop.requireNonce             KEYWARD_DPOP_REQUIRE_NONCE               token endpoint demands server DPoP nonces (false)
              sweep.interval                KEYWARD_SWEEP_INTERVAL                   seconds between expired-row sweeps (60)
              shutdown.grace                KEYWARD_SHUTDOWN_GRACE                   seconds requests may finish after SIGTERM/SIGINT (30)
              push.maxConcurrentSends       KEYWARD_PUSH_MAX_CONCURRENT_SENDS        login pushes in flight at once, 1-4096 (64; 16x as many queue)
              audit.retentionDays           KEYWARD_AUDIT_RETENTION_DAYS             days audit events are kept, 1-3650 (90)
              accounts.passwordThreads      KEYWARD_ACCOUNTS_PASSWORD_THREADS        threads running bcrypt for sign-ins (number of cores)
              accounts.maxConcurrentPasswordChecks KEYWARD_ACCOUNTS_MAX_CONCURRENT_PASSWORD_CHECKS checks at once, then 503 (64)
              http.trustedProxies           KEYWARD_HTTP_TRUSTED_PROXIES             CIDRs of proxies whose X-Forwarded-For/Forwarded is believed (none)
              http.clientPrefixV4 / V6      KEYWARD_HTTP_CLIENT_PREFIX_V4 / _V6      leading address bits naming one client for per-client limits (32 / 64)
              accounts.loginAttemptsPerAddress KEYWARD_ACCOUNTS_LOGIN_ATTEMPTS_PER_ADDRESS sign-in attempts per client address per 15 min (100)
              accounts.providerCallbackFailuresPerAddress KEYWARD_ACCOUNTS_PROVIDER_CALLBACK_FAILURES_PER_ADDRESS refused provider callbacks per client address per 10 min (20)
              http.maxBodySize              KEYWARD_HTTP_MAX_BODY_SIZE               largest accepted request body, bytes (65536)
              accounts.bcryptCost           KEYWARD_ACCOUNTS_BCRYPT_COST             password hash work factor, 4-31 (12)
              devices.challengeLifetime     KEYWARD_DEVICES_CHALLENGE_LIFETIME       seconds a device registration challenge lives, 30-600 (90)
              devices.pendingLimit          KEYWARD_DEVICES_PENDING_LIMIT            devices of one app awaiting an operator's decision (10000)
              devices.pendingLifetimeDays   KEYWARD_DEVICES_PENDING_LIFETIME_DAYS    days before an undecided pending device is deleted, 1-365 (7)
              devices.unattestedPerHour     KEYWARD_DEVICES_UNATTESTED_PER_HOUR      registrations of one app per hour with no verified attestation (10000)
              devices.playIntegrity.googleCallsPerAddressPerHour / …PerAppPerHour
                                            KEYWARD_DEVICES_PLAY_INTEGRITY_GOOGLE_CALLS_PER_ADDRESS_PER_HOUR / …_PER_APP_PER_HOUR
                                                                                     Google decodeIntegrityToken calls per client / per app and node an hour (20 / 400)
              devices.android.extraRootsFile KEYWARD_DEVICES_ANDROID_EXTRA_ROOTS_FILE PEM roots trusted besides Google's for Android Key Attestation
              devices.android.revocationListFile KEYWARD_DEVICES_ANDROID_REVOCATION_LIST_FILE Google's attestation status list (JSON), re-read when it changes
              devices.playIntegrity.serviceAccountFile KEYWARD_DEVICES_PLAY_INTEGRITY_SERVICE_ACCOUNT_FILE Google service account for decodeIntegrityToken
              devices.playIntegrity.url     KEYWARD_DEVICES_PLAY_INTEGRITY_URL       Play Integrity API base URL (https://playintegrity.googleapis.com)
              devices.appsFile              KEYWARD_DEVICES_APPS_FILE                device apps declared in JSON, added or updated at start
            A JSON config file nests dotted keys: {"port": 8080, "dpop": {"maxAge": 120}}.
            """
    )

    @OptionGroup var common: CommonOptions

    @Option(help: "Address to listen on (env KEYWARD_HOST).")
    var host: String?

    @Option(help: "Port to listen on (env KEYWARD_PORT).")
    var port: Int?

    @Option(name: .customLong("public-url"), help: "External base URL (env KEYWARD_PUBLIC_URL).")
    var publicURL: String?

    @Option(name: .customLong("log-level"), help: "Log level (env KEYWARD_LOG_LEVEL).")
    var logLevel: String?

    @Option(name: .customLong("log-format"), help: "auto, json or text; auto is text on a terminal (env KEYWARD_LOG_FORMAT).")
    var logFormat: String?

    @Flag(help: "Seed realm 'demo', user test/test and client push-device-client (secret device-client-secret).")
    var demo = false

    func run() async throws {
        // Run Swift concurrency on NIO's event loops: a request then stays on one thread instead of hopping
        // between the event loop and the cooperative pool (measurably faster on small machines).
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        var extra: [String: String] = [:]
        extra["host"] = host
        extra["port"] = port.map(String.init)
        extra["publicURL"] = publicURL
        extra["log.level"] = logLevel
        extra["log.format"] = logFormat
        let configuration = try await common.loadConfiguration(extra: extra)
        let logger = makeLogger(configuration)

        let runtime = try await KeywardRuntime.start(configuration: configuration, logger: logger)
        if demo {
            let seed = try await runtime.seedDemo()
            FileHandle.standardOutput.write(Data(seed.report.map { "demo: \($0)\n" }.joined().utf8))
        }
        for (app, outcome) in try await runtime.applyDeclaredApps() where outcome != .unchanged {
            logger.info("device app \(outcome) from devices.appsFile", metadata: ["app_id": "\(app)"])
        }
        let base = configuration.resolvedPublicURL
        let app = runtime.makeApplication { port in
            var lines = ["Keyward is listening on \(configuration.host):\(port) (public URL \(base))"]
            if demo {
                lines += DemoBanner.lines(base: base, device: DemoBanner.deviceCommand(executablePath: Bundle.main.executablePath ?? CommandLine.arguments[0]))
            }
            lines.append("  health:     \(base)/healthz   metrics: \(base)/metrics")
            // Written unbuffered so scripts waiting on this line see it at once.
            FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        }
        try await runtime.serve(app)
    }

    private func makeLogger(_ configuration: KeywardConfiguration) -> Logger {
        let level = Logger.Level(rawValue: configuration.logLevel) ?? .info
        let format = LogFormat(setting: configuration.logFormat)
        LoggingSystem.bootstrap { label in
            var handler = format.handler(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "keyward")
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending database migrations and exit.")

    @OptionGroup var common: CommonOptions

    func run() async throws {
        try await withRuntime(common) { _ in print("database is up to date") }
    }
}
