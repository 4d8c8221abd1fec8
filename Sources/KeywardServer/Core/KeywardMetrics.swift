// The server's Prometheus metrics: requests, tokens, DPoP refusals, pushes, registrations and more.
import Foundation
import HTTPTypes
import Prometheus
import Synchronization

/// The service's Prometheus metrics, kept in an injected registry (not the process-global MetricsSystem)
/// so several servers in one test process keep separate counts.
public final class KeywardMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry

    private static var requests: MetricNameDescriptor { MetricNameDescriptor(namespace: "keyward", metricName: "http_requests", unitName: "total", helpText: "HTTP requests by route, method and status") }
    private static var latency: MetricNameDescriptor { MetricNameDescriptor(namespace: "keyward", metricName: "http_request_duration", unitName: "seconds", helpText: "HTTP request latency by route, method and status") }
    private static var tokens: MetricNameDescriptor { MetricNameDescriptor(namespace: "keyward", metricName: "tokens_issued", unitName: "total", helpText: "Access tokens issued") }
    private static var dpopRejections: MetricNameDescriptor { MetricNameDescriptor(namespace: "keyward", metricName: "dpop_rejections", unitName: "total", helpText: "DPoP proofs or bound tokens refused, by endpoint and reason") }
    private static var securityEvents: MetricNameDescriptor { MetricNameDescriptor(namespace: "keyward", metricName: "security_events", unitName: "total", helpText: "Audit events (push-MFA challenges, enrollments, rotations, lockouts, refusals) by type") }
    private static var pushDeliveries: MetricNameDescriptor { MetricNameDescriptor(namespace: "keyward", metricName: "push_deliveries", unitName: "total", helpText: "Login pushes handed to a push provider, by provider type and outcome") }
    private static var eventStreams: MetricNameDescriptor { MetricNameDescriptor(namespace: "keyward", metricName: "challenge_event_streams", helpText: "Open challenge SSE streams on this node") }
    private static var eventStreamRereadFailures: MetricNameDescriptor { MetricNameDescriptor(namespace: "keyward", metricName: "challenge_event_stream_reread_failures", unitName: "total", helpText: "Times an open challenge SSE stream could not re-read its challenge from storage") }
    private static var pushesDropped: MetricNameDescriptor { MetricNameDescriptor(namespace: "keyward", metricName: "push_dropped", unitName: "total", helpText: "Login pushes not sent because push.maxConcurrentSends were in flight and as many queued") }
    private static var passwordChecks: MetricNameDescriptor { MetricNameDescriptor(namespace: "keyward", metricName: "password_checks", unitName: "total", helpText: "Sign-in password checks run on the password threads (checked) or refused because accounts.maxConcurrentPasswordChecks were under way (busy)") }
    private static var deviceRegistrations: MetricNameDescriptor { MetricNameDescriptor(namespace: "keyward", metricName: "device_registrations", unitName: "total", helpText: "Device registrations by outcome: a status stored, or the stable code of the refusal") }
    private static var playIntegrityGoogleRefusals: MetricNameDescriptor { MetricNameDescriptor(namespace: "keyward", metricName: "play_integrity_google_refused", unitName: "total", helpText: "Play Integrity tokens not sent to Google's decodeIntegrityToken: malformed, or over a client address's or an app's hourly budget") }
    private static var devModeRefusals: MetricNameDescriptor { MetricNameDescriptor(namespace: "keyward", metricName: "device_dev_mode_refusals", unitName: "total", helpText: "Development traffic refused for apps without the development bypass") }
    private static var hostTokens: MetricNameDescriptor { MetricNameDescriptor(namespace: "keyward", metricName: "host_token_checks", unitName: "total", helpText: "Host-signed tokens presented to the jwt-bearer grant, verified or refused by reason") }
    private static let latencyBuckets: [Duration] = [
        .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
    ]

    /// The registry's metrics by name and label values, once looked up. The registry builds the metric's name
    /// and finds its labels on every call, which cost microseconds on every request of the busiest routes.
    private let counters = Mutex<[String: Counter]>([:])
    private let histograms = Mutex<[String: DurationHistogram]>([:])

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
    }

    /// `key` names the metric and its label values uniquely; `make` runs only the first time.
    private func counter(_ key: String, make: () -> Counter) -> Counter {
        Self.cached(key, in: counters, make: make)
    }

    private static func cached<Metric: Sendable>(_ key: String, in known: borrowing Mutex<[String: Metric]>, make: () -> Metric) -> Metric {
        if let metric = known.withLock({ $0[key] }) { return metric }
        let made = make()
        known.withLock { $0[key] = made }
        return made
    }

    /// `route` is a registered route pattern or "unmatched"; the method is one of RFC 9110's or "other".
    func requestCompleted(route: String, method: HTTPRequest.Method, status: Int, duration: Duration) {
        let method = Self.methodLabel(method)
        let key = route + "\u{0}" + method + "\u{0}" + String(status)
        let labels = { [("route", route), ("method", method), ("status", String(status))] }
        counter("requests\u{0}" + key) { registry.makeCounter(descriptor: Self.requests, labels: labels()) }.increment()
        Self.cached(key, in: histograms) {
            registry.makeDurationHistogram(descriptor: Self.latency, labels: labels(), buckets: Self.latencyBuckets)
        }.record(duration)
    }

    private static let knownMethods: Set<HTTPRequest.Method> = [.get, .head, .post, .put, .delete, .connect, .options, .trace, .patch]

    private static func methodLabel(_ method: HTTPRequest.Method) -> String {
        knownMethods.contains(method) ? method.rawValue : "other"
    }

    func tokenIssued(realm: String, tokenType: String) {
        counter("tokens\u{0}" + realm + "\u{0}" + tokenType) {
            registry.makeCounter(descriptor: Self.tokens, labels: [("realm", realm), ("token_type", tokenType)])
        }.increment()
    }

    func dpopRejected(endpoint: DPoPRejection.Endpoint, reason: DPoPRejection) {
        registry.makeCounter(descriptor: Self.dpopRejections, labels: [("endpoint", endpoint.rawValue), ("reason", reason.label)]).increment()
    }

    func securityEvent(_ type: String) {
        registry.makeCounter(descriptor: Self.securityEvents, labels: [("type", type)]).increment()
    }

    func pushDelivered(providerType: String, outcome: String) {
        registry.makeCounter(descriptor: Self.pushDeliveries, labels: [("provider", providerType), ("outcome", outcome)]).increment()
    }

    func eventStreamsChanged(by delta: Int) {
        registry.makeGauge(descriptor: Self.eventStreams).increment(by: Double(delta))
    }

    func passwordChecked(ran: Bool) {
        registry.makeCounter(descriptor: Self.passwordChecks, labels: [("outcome", ran ? "checked" : "busy")]).increment()
    }

    /// `outcome`: "verified" or a `HostTokenRefusal.Reason`, a closed set.
    func hostTokenChecked(outcome: String) {
        counter("hostTokens\u{0}" + outcome) { registry.makeCounter(descriptor: Self.hostTokens, labels: [("outcome", outcome)]) }.increment()
    }

    /// `outcome`: a device status or an `ErrorCode` raw value, both closed sets.
    func deviceRegistration(outcome: String) {
        registry.makeCounter(descriptor: Self.deviceRegistrations, labels: [("outcome", outcome)]).increment()
    }

    /// `reason`: `malformed`, `address_limit` or `app_limit` (`GoogleDecodeBudget`).
    func playIntegrityGoogleRefused(reason: String) {
        registry.makeCounter(descriptor: Self.playIntegrityGoogleRefusals, labels: [("reason", reason)]).increment()
    }

    func devModeRefused() {
        registry.makeCounter(descriptor: Self.devModeRefusals).increment()
    }

    func pushDropped() {
        registry.makeCounter(descriptor: Self.pushesDropped).increment()
    }

    func eventStreamRereadFailed() {
        registry.makeCounter(descriptor: Self.eventStreamRereadFailures).increment()
    }

    public func render() -> String { registry.emitToString() }
}
