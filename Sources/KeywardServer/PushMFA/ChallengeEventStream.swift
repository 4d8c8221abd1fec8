// The Server-Sent-Events streams a browser follows a challenge with until it is decided.
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle
import Synchronization

/// The two Server-Sent-Events streams a browser follows a challenge with (docs/PUSH-MFA-PROTOCOL.md §3.10).
/// Changes made on this node wake the stream at once; storage is re-read every `pollInterval` so a change
/// made through another node shows up within that interval.
struct ChallengeEventStream: Sendable {
    struct Options: Sendable {
        var maxConnections = 256
        var heartbeat: Duration = .seconds(15)
        var maxLifetime: Duration = .seconds(55)
        var reconnectDelayMillis = 3000
        var pollInterval: Duration = .milliseconds(500)
    }

    let service: PushMFAService
    let signals: ChallengeSignals
    let metrics: KeywardMetrics
    let options: Options
    private let connections = ConnectionCount()

    init(service: PushMFAService, signals: ChallengeSignals, metrics: KeywardMetrics, options: Options = .init()) {
        self.service = service
        self.signals = signals
        self.metrics = metrics
        self.options = options
    }

    static let headers: HTTPFields = [
        .contentType: "text/event-stream", .cacheControl: "no-store", .init("Pragma")!: "no-cache", .init("X-Accel-Buffering")!: "no",
    ]

    func response(realm: String, rawId: String, secret: String?, kind: PushChallenge.Kind) async throws -> Response {
        let id = try PushMFAInput.uuid(rawId, "challengeId")
        guard let secret, !secret.isEmpty, secret.utf8.count <= PushMFALimits.watchSecretLength else { return oneShot("INVALID") }
        let first: PushChallenge?
        do {
            first = try await service.challenge(id: id)
        } catch {
            throw PushMFAError(503, "unknown_error")
        }
        guard let first, first.realm == realm else { return oneShot("NOT_FOUND") }
        // The secret is checked before the type, so a stranger learns nothing about the challenge.
        guard PushMFAService.watchSecretMatches(secret, first) else { return oneShot("FORBIDDEN") }
        guard kind == .enrollment || first.kind == .authentication else { return oneShot("BAD_TYPE") }
        guard connections.acquire(limit: options.maxConnections) else {
            let payload = Self.payload(first, kind: kind, retryAfter: options.reconnectDelayMillis, status: "TOO_MANY_CONNECTIONS")
            connections.release()
            return Response(status: .ok, headers: Self.headers, body: .init(byteBuffer: ByteBuffer(string: "retry: \(options.reconnectDelayMillis)\n" + payload)))
        }
        let stream = signals.changes(of: id, tick: options.pollInterval)
        metrics.eventStreamsChanged(by: 1)
        return Response(status: .ok, headers: Self.headers, body: ResponseBody { [self] writer in
            defer {
                connections.release()
                metrics.eventStreamsChanged(by: -1)
            }
            try await follow(first, kind: kind, changes: stream, writer: &writer)
            try await writer.finish(nil)
        })
    }

    /// Emits the current status, then every change, until the status leaves PENDING, the lifetime ends or the
    /// server shuts down. The last two end with a `retry:` line, so the browser reconnects — to another node when
    /// this one is going away — instead of holding the shutdown up for the rest of the lifetime.
    private func follow(_ first: PushChallenge, kind: PushChallenge.Kind, changes: AsyncStream<ChallengeChange>, writer: inout any ResponseBodyWriter) async throws {
        let clock = ContinuousClock()
        let started = clock.now
        var lastOutput = started
        var current = first
        var sent = current.effectiveStatus(at: service.clock.now())
        try await writer.write(ByteBuffer(string: Self.payload(current, kind: kind, status: sent.rawValue)))
        guard sent == .pending else { return }
        var rereadFailed = false
        for await change in changes {
            var status = sent
            switch change {
            case .changed(let row):
                current = row
                status = row.status
            case .status(let announced):
                status = announced
            case .removed:
                status = .expired
            case .unknown:
                do {
                    if let reread = try await service.challenge(id: current.id) {
                        current = reread
                        status = reread.status
                    } else {
                        status = .expired  // deleted while pending: replaced by a resend, or cleaned up
                    }
                } catch {
                    // Nothing is known to have changed; the next tick reads again. Logged once per stream, not per
                    // tick; counted every time.
                    metrics.eventStreamRereadFailed()
                    if !rereadFailed {
                        service.logger.warning("SSE stream could not re-read its challenge", metadata: ["challengeId": "\(current.id)", "error": "\(error)"])
                    }
                    rereadFailed = true
                }
            }
            if status != sent {
                sent = status
                lastOutput = clock.now
                try await writer.write(ByteBuffer(string: Self.payload(current, kind: kind, status: status.rawValue)))
                if status != .pending { return }
            }
            if clock.now - started >= options.maxLifetime || Task.isShuttingDownGracefully {
                let payload = Self.payload(current, kind: kind, retryAfter: options.reconnectDelayMillis, status: sent.rawValue)
                try await writer.write(ByteBuffer(string: "retry: \(options.reconnectDelayMillis)\n" + payload))
                return
            }
            if clock.now - lastOutput >= options.heartbeat {
                lastOutput = clock.now
                try await writer.write(ByteBuffer(string: ": keepalive\n\n"))
            }
        }
    }

    private func oneShot(_ status: String) -> Response {
        Response(status: .ok, headers: Self.headers, body: .init(byteBuffer: ByteBuffer(string: "event: status\ndata: {\"status\":\"\(status)\"}\n\n")))
    }

    /// `event: status` + one `data:` line of JSON. `expiresAt` is an ISO-8601 instant like Java's `Instant.toString`.
    static func payload(_ challenge: PushChallenge, kind: PushChallenge.Kind, retryAfter: Int? = nil, status: String) -> String {
        var json = "{\"status\":\"\(status)\",\"challengeId\":\"\(challenge.id)\",\"expiresAt\":\"\(instant(challenge.expiresAt))\""
        if kind == .authentication {
            json += ",\"clientId\":" + (challenge.clientId.map(jsonString) ?? "null")
        }
        if let retryAfter { json += ",\"retryAfterMillis\":\(retryAfter)" }
        return "event: status\ndata: " + json + "}\n\n"
    }

    /// Java's `Instant.toString()` at millisecond precision: `2026-11-22T19:35:20Z`, or `….123Z` with a fraction.
    /// Plain arithmetic (days to civil date, proleptic Gregorian): Calendar and String(format:) were a percent of the
    /// server's time under load.
    static func instant(_ date: Date) -> String {
        let millis = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let (seconds, fraction) = millis.flooredDivision(by: 1000)
        let (days, secondOfDay) = seconds.flooredDivision(by: 86400)
        let (year, month, day) = Self.civilDate(daysSinceEpoch: days)
        var text = Self.digits(year, 4) + "-" + Self.digits(month, 2) + "-" + Self.digits(day, 2)
        text += "T" + Self.digits(secondOfDay / 3600, 2) + ":" + Self.digits(secondOfDay % 3600 / 60, 2) + ":" + Self.digits(secondOfDay % 60, 2)
        return text + (fraction == 0 ? "Z" : "." + Self.digits(fraction, 3) + "Z")
    }

    /// Howard Hinnant's `civil_from_days`: the Gregorian date `days` after 1970-01-01.
    private static func civilDate(daysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let (era, dayOfEra) = shifted.flooredDivision(by: 146_097)
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func digits(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    private static func jsonString(_ value: String) -> String {
        var escaped = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case _ where scalar.value < 0x20: escaped += String(format: "\\u%04x", scalar.value)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped + "\""
    }
}

/// Open SSE connections on this node, capped (`sse-max-connections`).
private final class ConnectionCount: Sendable {
    private let count = Mutex(0)

    func acquire(limit: Int) -> Bool {
        count.withLock { value in
            value += 1
            return value <= limit
        }
    }

    func release() { count.withLock { $0 -= 1 } }
}

private extension Int64 {
    /// Quotient rounded toward negative infinity and the remainder that goes with it (never negative for a
    /// positive divisor): dates before 1970 count back from the epoch.
    func flooredDivision(by divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
        return remainder != 0 && (remainder < 0) != (divisor < 0) ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }
}
