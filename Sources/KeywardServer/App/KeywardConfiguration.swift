// Every setting of `keyward serve`, read from flags, environment and the JSON configuration file.
import Configuration
import Foundation
import NIOCore

/// Every setting of `keyward serve`. Each one is read from (highest precedence first) a command-line flag,
/// the environment (`KEYWARD_` + the key in upper snake case, e.g. `KEYWARD_PUBLIC_URL`), and the JSON
/// configuration file (`--config` / `KEYWARD_CONFIG`, keys as written below, dots meaning nesting).
public struct KeywardConfiguration: Sendable, Equatable {
    /// `host`: address to listen on.
    public var host = "127.0.0.1"
    /// `port`: TCP port to listen on (0 picks a free one).
    public var port = 8080
    /// `publicURL`: the externally visible base URL; issuers and DPoP `htu` checks derive from it, never from `Host`.
    public var publicURL: String?
    /// `dataDir`: where the embedded database and the generated master key file live.
    public var dataDirectory = "keyward-data"
    /// `databaseURL`: `sqlite:PATH` (default `sqlite:<dataDir>/keyward.db`) or `postgres://user:pass@host:port/db`.
    public var databaseURL: String?
    /// `sqlite.synchronous`: `full` (default) or `normal`; see `SQLiteSynchronous`. With `normal` the last commits
    /// before a power loss (not a process crash) may be lost: an approval or enrollment already answered, gone.
    public var sqliteSynchronous = SQLiteSynchronous.full
    /// `masterKey`: base64 of 32 random bytes; encrypts realm private keys at rest. Required with PostgreSQL.
    public var masterKey: String?
    /// `log.level`: trace, debug, info, notice, warning, error, critical.
    public var logLevel = "info"
    /// `log.format`: `auto` (text when stdout is a terminal, JSON otherwise), `json` or `text` (see `LogFormat`).
    public var logFormat = "auto"
    /// `dpop.maxAge`: how old (seconds) a DPoP proof may be at resource endpoints (push-MFA compatible default).
    public var dpopMaxAge = 120
    /// `dpop.futureSkew`: how far (seconds) a proof's `iat` may lie in the future at resource endpoints.
    public var dpopFutureSkew = 120
    /// `dpop.tokenEndpointMaxAge`: proof age window at the token endpoint (tighter than resources).
    public var dpopTokenEndpointMaxAge = 60
    /// `dpop.tokenEndpointFutureSkew`: future skew allowed at the token endpoint.
    public var dpopTokenEndpointFutureSkew = 15
    /// `dpop.requireNonce`: the token endpoint demands server-issued DPoP nonces (RFC 9449 §8).
    public var dpopRequireNonce = false
    /// `sweep.interval`: seconds between sweeps of expired replay entries and unpublished keys.
    public var sweepInterval = 60
    /// `shutdown.grace`: seconds a stopping server lets requests in flight finish before it cancels them.
    public var shutdownGrace = 30
    /// `audit.retentionDays`: audit events older than this are deleted by the sweeper.
    public var auditRetentionDays = 90
    /// `http.trustedProxies`: networks (CIDR, comma-separated) of the proxies in front of Keyward; only from them
    /// are `Forwarded` / `X-Forwarded-For` believed when telling who a client is. Empty: the socket peer is the client.
    public var trustedProxies = TrustedProxies.none
    /// `http.clientPrefixV4` / `http.clientPrefixV6`: how many leading bits of an address name one client for
    /// per-client limits (default 32, each IPv4 address, and 64, an IPv6 host's usual subnet; see `ClientNetworks`).
    public var clientPrefixV4 = ClientNetworks.defaultPrefixV4
    public var clientPrefixV6 = ClientNetworks.defaultPrefixV6

    /// Who a request's client is, from the three settings above.
    public var clientNetworks: ClientNetworks {
        ClientNetworks(trustedProxies: trustedProxies, prefixV4: clientPrefixV4, prefixV6: clientPrefixV6)
    }
    /// `accounts.passwordThreads`: threads that run bcrypt for sign-ins, apart from the request threads.
    public var passwordThreads = System.coreCount
    /// `accounts.maxConcurrentPasswordChecks`: sign-in password checks running or waiting at once; beyond this a
    /// sign-in is answered 503 with Retry-After.
    public var maxConcurrentPasswordChecks = 64
    /// `accounts.loginAttemptsPerAddress`: sign-in attempts one client address may make per 15 minutes, whatever
    /// the usernames (behind a proxy set `http.trustedProxies`, or every user shares the proxy's address).
    public var loginAttemptsPerAddress = 100
    /// `accounts.providerCallbackFailuresPerAddress`: identity-provider callbacks from one client address whose code
    /// exchange or answer may be refused per 10 minutes before that address's callbacks are refused unsent.
    public var providerCallbackFailuresPerAddress = 20
    /// `broker.relaysPerPersonPerMinute`: relays one signed-in person may complete per minute on a node; then the app
    /// is answered `temporarily_unavailable` until the minute ends.
    public var relaysPerPersonPerMinute = 30
    /// `http.maxBodySize`: largest request body accepted, in bytes.
    public var maxBodySize = 64 * 1024
    /// `accounts.bcryptCost`: work factor of password hashes (4-31; each step doubles the cost).
    public var bcryptCost = 12
    /// `pushMfa.requireAth`: device API proofs must carry `ath` (the original's `dpop-require-ath`); turn off only
    /// for old simulators that omit it.
    public var pushMfaRequireAth = true
    /// `pushMfa.dpopIatTolerance`: seconds a device proof's `iat` may differ from now (`dpop-iat-tolerance-seconds`, 30-600).
    public var pushMfaDpopIatTolerance = 120
    /// `pushMfa.dpopJtiTtl`: seconds a device proof's `jti` is remembered (`dpop-jti-ttl-seconds`, 30-3600).
    public var pushMfaDpopJtiTTL = 300
    /// `sse.maxConnections`: open challenge event streams per node (`sse-max-connections`, 1-1024).
    public var sseMaxConnections = 256
    /// `sse.heartbeatSeconds`: idle seconds before a `: keepalive` comment (5-300).
    public var sseHeartbeatSeconds = 15
    /// `sse.maxConnectionLifetimeSeconds`: a stream closes after this long and the browser reconnects (15-1800).
    public var sseMaxConnectionLifetimeSeconds = 55
    /// `sse.reconnectDelayMillis`: the `retry:` hint sent when a stream closes (250-30000).
    public var sseReconnectDelayMillis = 3000
    /// `sse.pollMillis`: how often a stream re-reads its challenge (100-10000). Changes made on this node, and with
    /// PostgreSQL on any node (LISTEN/NOTIFY), wake streams at once; the poll is the fallback.
    public var ssePollMillis = 500
    /// `push.maxConcurrentSends`: login pushes in flight to push providers at once; 16 times as many may wait, and
    /// a push beyond that is dropped (the phone still finds the challenge when it asks).
    public var pushMaxConcurrentSends = 64
    /// `push.fcm.url`: FCM HTTP v1 send URL, `https://fcm.googleapis.com/v1/projects/<id>/messages:send`; enables `fcm` devices.
    public var fcmURL: String?
    /// `push.fcm.serviceAccountFile`: Google service-account JSON (default: `GOOGLE_APPLICATION_CREDENTIALS`).
    public var fcmServiceAccountFile: String?
    /// `push.fcm.title` / `push.fcm.body`: the notification text.
    public var fcmTitle = "Push MFA"
    public var fcmBody = "Please confirm your login"
    /// `push.apns.teamId`, `push.apns.keyId`, `push.apns.keyFile` (.p8), `push.apns.topic` (bundle id): enable `apns` devices.
    public var apnsTeamId: String?
    public var apnsKeyId: String?
    public var apnsKeyFile: String?
    public var apnsTopic: String?
    /// `push.apns.url`: `https://api.push.apple.com` (default) or `https://api.sandbox.push.apple.com`.
    public var apnsURL = APNsSettings.production
    /// `devices.challengeLifetime`: seconds a device registration or rotation challenge stays valid.
    public var devicesChallengeLifetime = 90
    /// `devices.pendingLimit`: devices of one app that may wait for an operator's decision at once; registrations
    /// the app's policy would store as pending are refused (429 `TOO_MANY_REGISTRATIONS`) beyond it.
    public var devicesPendingLimit = 10_000
    /// `devices.pendingLifetimeDays`: days a pending device waits for a decision before it is deleted.
    public var devicesPendingLifetimeDays = 7
    /// `devices.unattestedPerHour`: registrations of one app in an hour that no verified attestation vouches for
    /// (pending, or accepted without one); beyond it they are refused (429 `TOO_MANY_REGISTRATIONS`).
    public var devicesUnattestedPerHour = 10_000
    /// `devices.android.extraRootsFile`: PEM roots trusted for Android Key Attestation besides Google's (e.g. its
    /// original 2016 RSA certificate, for chains made before the 2022 re-issue).
    public var androidExtraRootsFile: String?
    /// `devices.android.revocationListFile`: Google's attestation status list (JSON); read at start and again within a
    /// minute of the file changing.
    public var androidRevocationListFile: String?
    /// `devices.playIntegrity.serviceAccountFile`: a Google service account allowed to call `decodeIntegrityToken`,
    /// for apps added with `--play-integrity-google`.
    public var playIntegrityServiceAccountFile: String?
    /// `devices.playIntegrity.googleCallsPerAddressPerHour`: calls to Google's decodeIntegrityToken one client address
    /// may cause in an hour (registrations of apps added with `--play-integrity-google`); beyond it, 429.
    public var playIntegrityGoogleCallsPerAddressPerHour = DeviceService.Limits.default.googleDecodesPerAddressPerHour
    /// `devices.playIntegrity.googleCallsPerAppPerHour`: such calls for one app in an hour, per node; Google's default
    /// quota is 10,000 a day per project, so raise this with the quota.
    public var playIntegrityGoogleCallsPerAppPerHour = DeviceService.Limits.default.googleDecodesPerAppPerHour
    /// `devices.appsFile`: device apps declared in a JSON file, added or updated when `keyward serve` starts.
    public var devicesAppsFile: String?
    /// `devices.playIntegrity.url`: Google's Play Integrity API (a local stand-in in tests).
    public var playIntegrityURL = "https://playintegrity.googleapis.com"
    /// `push.apns.caFile`: an extra trust anchor (PEM) for a TLS-intercepting proxy or a test double.
    public var apnsCAFile: String?
    /// `https_proxy`, `http_proxy`, `no_proxy` (either case) from the environment: push services are reached
    /// through that proxy (see `OutboundProxy`).
    public var proxyEnvironment: [String: String] = [:]

    /// The FCM sender's settings, or nil when FCM is not configured.
    public var fcmSettings: FCMSettings? {
        guard let fcmURL else { return nil }
        return FCMSettings(url: fcmURL, serviceAccountFile: fcmServiceAccountFile ?? "", title: fcmTitle, body: fcmBody)
    }

    /// The APNs sender's settings, or nil when APNs is not configured.
    public var apnsSettings: APNsSettings? {
        guard apnsTeamId != nil || apnsKeyId != nil || apnsKeyFile != nil || apnsTopic != nil else { return nil }
        return APNsSettings(url: apnsURL, teamId: apnsTeamId ?? "", keyId: apnsKeyId ?? "", keyFile: apnsKeyFile ?? "", topic: apnsTopic ?? "", caFile: apnsCAFile)
    }

    public init() {}

    /// The public base URL without a trailing slash.
    public var resolvedPublicURL: String {
        let url = publicURL ?? "http://\(host):\(port)"
        return url.hasSuffix("/") ? String(url.dropLast()) : url
    }

    public var resolvedDatabaseURL: String {
        databaseURL ?? "sqlite:\(dataDirectory)/keyward.db"
    }

    /// Rules that tie settings together, checked when the configuration is loaded and again when a server
    /// starts (a configuration can also be built in code).
    public func validate() throws {
        // A device proof is accepted while now is within ±tolerance of its iat: 2 × tolerance seconds in all.
        // Its jti must be remembered at least that long, or the proof replays once it is forgotten.
        let proofWindow = 2 * pushMfaDpopIatTolerance
        guard pushMfaDpopJtiTTL >= proofWindow else {
            throw ConfigurationError(
                setting: "pushMfa.dpopJtiTtl",
                problem: "\(pushMfaDpopJtiTTL) s does not cover the proof window: a device proof is accepted for 2 × pushMfa.dpopIatTolerance "
                    + "(\(pushMfaDpopIatTolerance) s) = \(proofWindow) s, so a proof forgotten sooner could be replayed; "
                    + "set pushMfa.dpopJtiTtl to at least \(proofWindow) or lower pushMfa.dpopIatTolerance"
            )
        }
    }
}


extension KeywardConfiguration {
    /// Reads and validates the configuration. `overrides` holds command-line values by key.
    public static func load(
        overrides: [String: String] = [:],
        environment: [String: String] = ProcessInfo.processInfo.environment,
        configFile: String? = nil
    ) async throws -> KeywardConfiguration {
        var providers: [any ConfigProvider] = [
            InMemoryProvider(
                name: "command line",
                values: Dictionary(
                    uniqueKeysWithValues: overrides.map { (AbsoluteConfigKey($0.key.split(separator: ".").map(String.init)), ConfigValue(.string($0.value), isSecret: false)) }
                )
            ),
            KeyMappingProvider(
                upstream: EnvironmentVariablesProvider(
                    environmentVariables: environment,
                    secretsSpecifier: .specific(["KEYWARD_MASTER_KEY", "KEYWARD_DATABASE_URL"])
                ),
                keyMapper: { key in AbsoluteConfigKey(["keyward"] + key.components, context: key.context) }
            ),
        ]
        let filePath = configFile ?? environment["KEYWARD_CONFIG"]
        if let filePath {
            guard FileManager.default.fileExists(atPath: filePath) else {
                throw ConfigurationError(setting: "config", problem: "file \(filePath) does not exist")
            }
            do {
                providers.append(try await FileProvider<JSONSnapshot>(filePath: .init(filePath)))
            } catch {
                throw ConfigurationError(setting: "config", problem: "cannot read \(filePath) as JSON: \(error)")
            }
        }
        let reader = SettingReader(reader: ConfigReader(providers: providers), environmentCredentials: environment["GOOGLE_APPLICATION_CREDENTIALS"])
        var configuration = try reader.configuration()
        configuration.proxyEnvironment = environment.filter { OutboundProxy.variables.contains($0.key) }
        return configuration
    }
}

/// Typed, validated access to the raw settings.
private struct SettingReader {
    let reader: ConfigReader
    /// Google's conventional variable, read as the default service-account file for FCM.
    var environmentCredentials: String?

    func configuration() throws -> KeywardConfiguration {
        var configuration = KeywardConfiguration()
        configuration.host = try string("host") ?? configuration.host
        configuration.port = try integer("port", in: 0...65535) ?? configuration.port
        if let publicURL = try string("publicURL") {
            guard let url = URL(string: publicURL), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
                url.host != nil, url.query == nil, url.fragment == nil
            else {
                throw ConfigurationError(setting: "publicURL", problem: "'\(publicURL)' is not an absolute http(s) URL without query or fragment")
            }
            configuration.publicURL = publicURL
        }
        configuration.dataDirectory = try string("dataDir") ?? configuration.dataDirectory
        configuration.databaseURL = try string("databaseURL", secret: true)
        if let synchronous = try choice("sqlite.synchronous", SQLiteSynchronous.allCases.map(\.rawValue)) {
            configuration.sqliteSynchronous = SQLiteSynchronous(rawValue: synchronous) ?? configuration.sqliteSynchronous
        }
        configuration.masterKey = try string("masterKey", secret: true)
        if let masterKey = configuration.masterKey {
            guard let bytes = Data(base64Encoded: masterKey), bytes.count == 32 else {
                throw ConfigurationError(setting: "masterKey", problem: "must be base64 of exactly 32 bytes (generate one with `openssl rand -base64 32`)")
            }
        }
        configuration.logLevel = try choice("log.level", ["trace", "debug", "info", "notice", "warning", "error", "critical"]) ?? configuration.logLevel
        configuration.logFormat = try choice("log.format", LogFormat.settingValues) ?? configuration.logFormat
        configuration.dpopMaxAge = try integer("dpop.maxAge", in: 1...3600) ?? configuration.dpopMaxAge
        configuration.dpopFutureSkew = try integer("dpop.futureSkew", in: 0...3600) ?? configuration.dpopFutureSkew
        configuration.dpopTokenEndpointMaxAge = try integer("dpop.tokenEndpointMaxAge", in: 1...3600) ?? configuration.dpopTokenEndpointMaxAge
        configuration.dpopTokenEndpointFutureSkew = try integer("dpop.tokenEndpointFutureSkew", in: 0...3600) ?? configuration.dpopTokenEndpointFutureSkew
        configuration.dpopRequireNonce = try boolean("dpop.requireNonce") ?? configuration.dpopRequireNonce
        configuration.sweepInterval = try integer("sweep.interval", in: 1...86400) ?? configuration.sweepInterval
        configuration.shutdownGrace = try integer("shutdown.grace", in: 1...3600) ?? configuration.shutdownGrace
        configuration.auditRetentionDays = try integer("audit.retentionDays", in: 1...3650) ?? configuration.auditRetentionDays
        if let proxies = try string("http.trustedProxies") {
            do throws(ClientAddressError) {
                configuration.trustedProxies = try TrustedProxies(parsing: proxies)
            } catch {
                throw ConfigurationError(setting: "http.trustedProxies", problem: error.description)
            }
        }
        configuration.clientPrefixV4 = try integer("http.clientPrefixV4", in: 8...32) ?? configuration.clientPrefixV4
        configuration.clientPrefixV6 = try integer("http.clientPrefixV6", in: 16...128) ?? configuration.clientPrefixV6
        configuration.passwordThreads = try integer("accounts.passwordThreads", in: 1...256) ?? configuration.passwordThreads
        configuration.maxConcurrentPasswordChecks = try integer("accounts.maxConcurrentPasswordChecks", in: 1...100_000) ?? configuration.maxConcurrentPasswordChecks
        configuration.loginAttemptsPerAddress = try integer("accounts.loginAttemptsPerAddress", in: 1...100_000) ?? configuration.loginAttemptsPerAddress
        configuration.providerCallbackFailuresPerAddress = try integer("accounts.providerCallbackFailuresPerAddress", in: 1...100_000)
            ?? configuration.providerCallbackFailuresPerAddress
        configuration.relaysPerPersonPerMinute = try integer("broker.relaysPerPersonPerMinute", in: 1...100_000) ?? configuration.relaysPerPersonPerMinute
        configuration.maxBodySize = try integer("http.maxBodySize", in: 1024...(16 * 1024 * 1024)) ?? configuration.maxBodySize
        configuration.bcryptCost = try integer("accounts.bcryptCost", in: 4...31) ?? configuration.bcryptCost
        configuration.pushMfaRequireAth = try boolean("pushMfa.requireAth") ?? configuration.pushMfaRequireAth
        configuration.pushMfaDpopIatTolerance = try integer("pushMfa.dpopIatTolerance", in: 30...600) ?? configuration.pushMfaDpopIatTolerance
        configuration.pushMfaDpopJtiTTL = try integer("pushMfa.dpopJtiTtl", in: 30...3600) ?? configuration.pushMfaDpopJtiTTL
        configuration.sseMaxConnections = try integer("sse.maxConnections", in: 1...1024) ?? configuration.sseMaxConnections
        configuration.sseHeartbeatSeconds = try integer("sse.heartbeatSeconds", in: 5...300) ?? configuration.sseHeartbeatSeconds
        configuration.sseMaxConnectionLifetimeSeconds = try integer("sse.maxConnectionLifetimeSeconds", in: 15...1800) ?? configuration.sseMaxConnectionLifetimeSeconds
        configuration.sseReconnectDelayMillis = try integer("sse.reconnectDelayMillis", in: 250...30000) ?? configuration.sseReconnectDelayMillis
        configuration.ssePollMillis = try integer("sse.pollMillis", in: 100...10000) ?? configuration.ssePollMillis
        configuration.pushMaxConcurrentSends = try integer("push.maxConcurrentSends", in: 1...4096) ?? configuration.pushMaxConcurrentSends
        configuration.fcmURL = try string("push.fcm.url")
        configuration.fcmServiceAccountFile = try string("push.fcm.serviceAccountFile") ?? environmentCredentials
        configuration.fcmTitle = try string("push.fcm.title") ?? configuration.fcmTitle
        configuration.fcmBody = try string("push.fcm.body") ?? configuration.fcmBody
        configuration.apnsTeamId = try string("push.apns.teamId")
        configuration.apnsKeyId = try string("push.apns.keyId")
        configuration.apnsKeyFile = try string("push.apns.keyFile")
        configuration.apnsTopic = try string("push.apns.topic")
        configuration.apnsURL = try string("push.apns.url") ?? configuration.apnsURL
        configuration.apnsCAFile = try string("push.apns.caFile")
        configuration.devicesChallengeLifetime = try integer("devices.challengeLifetime", in: 30...600) ?? configuration.devicesChallengeLifetime
        configuration.devicesPendingLimit = try integer("devices.pendingLimit", in: 1...10_000_000) ?? configuration.devicesPendingLimit
        configuration.devicesPendingLifetimeDays = try integer("devices.pendingLifetimeDays", in: 1...365) ?? configuration.devicesPendingLifetimeDays
        configuration.devicesUnattestedPerHour = try integer("devices.unattestedPerHour", in: 1...10_000_000) ?? configuration.devicesUnattestedPerHour
        configuration.androidExtraRootsFile = try string("devices.android.extraRootsFile")
        configuration.androidRevocationListFile = try string("devices.android.revocationListFile")
        configuration.playIntegrityServiceAccountFile = try string("devices.playIntegrity.serviceAccountFile")
        configuration.playIntegrityGoogleCallsPerAddressPerHour = try integer("devices.playIntegrity.googleCallsPerAddressPerHour", in: 1...1_000_000)
            ?? configuration.playIntegrityGoogleCallsPerAddressPerHour
        configuration.playIntegrityGoogleCallsPerAppPerHour = try integer("devices.playIntegrity.googleCallsPerAppPerHour", in: 1...10_000_000)
            ?? configuration.playIntegrityGoogleCallsPerAppPerHour
        configuration.devicesAppsFile = try string("devices.appsFile")
        configuration.playIntegrityURL = try string("devices.playIntegrity.url") ?? configuration.playIntegrityURL
        try configuration.validate()
        return configuration
    }

    private func key(_ name: String) -> ConfigKey { ConfigKey(name.split(separator: ".").map(String.init)) }

    private func string(_ name: String, secret: Bool = false) throws -> String? {
        if let value = reader.string(forKey: key(name), isSecret: secret) {
            let trimmed = value.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { throw ConfigurationError(setting: name, problem: "must not be empty") }
            return trimmed
        }
        // A JSON number or boolean where text is expected is a mistake worth naming.
        if reader.int(forKey: key(name)) != nil || reader.bool(forKey: key(name)) != nil {
            throw ConfigurationError(setting: name, problem: "must be a string")
        }
        return nil
    }

    private func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        let value: Int
        if let number = reader.int(forKey: key(name)) {
            value = number
        } else if let text = reader.string(forKey: key(name)) {
            guard let number = Int(text.trimmingCharacters(in: .whitespaces)) else {
                throw ConfigurationError(setting: name, problem: "'\(text)' is not a whole number")
            }
            value = number
        } else {
            return nil
        }
        guard range.contains(value) else {
            throw ConfigurationError(setting: name, problem: "\(value) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    private func boolean(_ name: String) throws -> Bool? {
        if let value = reader.bool(forKey: key(name)) { return value }
        guard let text = reader.string(forKey: key(name)) else { return nil }
        switch text.trimmingCharacters(in: .whitespaces).lowercased() {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw ConfigurationError(setting: name, problem: "'\(text)' is not true or false")
        }
    }

    private func choice(_ name: String, _ allowed: [String]) throws -> String? {
        guard let value = try string(name) else { return nil }
        guard allowed.contains(value.lowercased()) else {
            throw ConfigurationError(setting: name, problem: "'\(value)' is not one of \(allowed.joined(separator: ", "))")
        }
        return value.lowercased()
    }
}
