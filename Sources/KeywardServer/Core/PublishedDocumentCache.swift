// Fetching and caching documents issuers publish at URLs, such as JWK Sets and discovery documents.
import Foundation
import KeywardJOSE
import Logging
import Synchronization

/// Documents issuers publish at URLs (JWK Sets, OpenID Connect discovery documents), fetched and cached per node.
///
/// A URL is fetched on first use and again when its freshness (the issuer's `Cache-Control: max-age`, held between
/// `minFreshness` and `maxFreshness`; `defaultFreshness` without one) has run out; a stale document keeps answering
/// while the refresh runs behind it. A caller for whom the cached document will not do (a JWK Set without the
/// token's `kid`: a rotation) waits for one refetch. Every fetch, failed or not, is at least `minRefetchInterval`
/// after the last one for that URL, so neither junk requests nor an issuer that is down make Keyward hammer it. When
/// a fetch fails the last good document is kept; only a URL never fetched successfully has none. Concurrent requests
/// share one fetch.
///
/// Not an actor: the common case (a fresh cached document) is one lock and no hop to another executor.
final class PublishedDocumentCache<Value: Sendable>: Sendable {
    static var minFreshness: TimeInterval { 60 }
    static var maxFreshness: TimeInterval { 86400 }
    static var minRefetchInterval: TimeInterval { 10 }

    private struct Cached {
        var value: Value
        var freshUntil: Date
    }

    private struct State {
        var documents: [String: Cached] = [:]
        /// When each URL was last fetched or tried, successful or not.
        var lastAttempt: [String: Date] = [:]
        var inFlight: [String: Task<Value?, Never>] = [:]
    }

    /// What a request does about a URL, decided under the lock.
    private enum Plan {
        case answer(Value)
        /// Wait for a fetch; without a result, answer `fallback` or, without one, nothing.
        case wait(Task<Value?, Never>, fallback: Value?)
        case unavailable
    }

    private let fetcher: any DocumentFetcher
    private let clock: any KeywardClock
    private let logger: Logger
    /// What the document is, for logs ("issuer keys", "discovery document").
    private let kind: String
    private let defaultFreshness: TimeInterval
    /// Reads a fetched body; a problem keeps the last good document, as a failed fetch does.
    private let parse: @Sendable ([UInt8]) -> Result<Value, DocumentProblem>
    private let state = Mutex(State())

    init(
        kind: String, fetcher: any DocumentFetcher, clock: any KeywardClock, logger: Logger, defaultFreshness: TimeInterval,
        parse: @escaping @Sendable ([UInt8]) -> Result<Value, DocumentProblem>
    ) {
        self.kind = kind
        self.fetcher = fetcher
        self.clock = clock
        self.logger = logger
        self.defaultFreshness = defaultFreshness
        self.parse = parse
    }

    /// The document at `url` for a request of `owner` (named in logs), refetched once when `suffices` says the
    /// cached one will not do; nil when there is none to be had.
    func value(url: String, owner: String, suffices: (Value) -> Bool = { _ in true }) async -> Value? {
        let now = clock.now()
        let plan = state.withLock { state -> Plan in
            let triedJustNow = state.lastAttempt[url].map { now.timeIntervalSince($0) < Self.minRefetchInterval } ?? false
            guard let cached = state.documents[url] else {
                // Never fetched: wait for the fetch, but a failed one is not retried for every request that comes.
                if let running = state.inFlight[url] { return .wait(running, fallback: nil) }
                return triedJustNow ? .unavailable : .wait(startFetch(&state, url: url, owner: owner, now: now), fallback: nil)
            }
            if suffices(cached.value) {
                // Stale: answer from the document at hand and refresh behind it, so a slow issuer slows no request.
                if now >= cached.freshUntil, !triedJustNow, state.inFlight[url] == nil {
                    _ = startFetch(&state, url: url, owner: owner, now: now)
                }
                return .answer(cached.value)
            }
            // The document lacks what the request needs: one refetch, waited for, unless one was tried a moment ago.
            if let running = state.inFlight[url] { return .wait(running, fallback: cached.value) }
            return triedJustNow ? .answer(cached.value) : .wait(startFetch(&state, url: url, owner: owner, now: now), fallback: cached.value)
        }
        switch plan {
        case .answer(let value): return value
        case .wait(let fetch, let fallback): return await fetch.value ?? fallback
        case .unavailable: return nil
        }
    }

    /// Starts the one fetch of `url` (called under the lock): the attempt is recorded at once, the task stores its
    /// result and clears itself.
    private func startFetch(_ state: inout State, url: String, owner: String, now: Date) -> Task<Value?, Never> {
        state.lastAttempt[url] = now
        let task = Task { await self.fetch(url: url, owner: owner) }
        state.inFlight[url] = task
        return task
    }

    /// One fetch; a failure keeps what was cached. nil when the fetch failed.
    private func fetch(url: String, owner: String) async -> Value? {
        let outcome: Result<(Value, Int?), DocumentProblem>
        do throws(DocumentFetchError) {
            let document = try await fetcher.fetch(url)
            outcome = parse(document.body).map { ($0, document.maxAge) }
        } catch {
            outcome = .failure(DocumentProblem(error.description))
        }
        let now = clock.now()
        let kept = state.withLock { state -> Bool in
            state.inFlight[url] = nil
            state.lastAttempt[url] = now
            if case .success(let (value, maxAge)) = outcome {
                let freshness = maxAge.map { min(max(TimeInterval($0), Self.minFreshness), Self.maxFreshness) } ?? defaultFreshness
                state.documents[url] = Cached(value: value, freshUntil: now.addingTimeInterval(freshness))
            }
            return state.documents[url] != nil
        }
        switch outcome {
        case .success(let (value, _)):
            return value
        case .failure(let problem):
            logger.warning(
                "\(kind) could not be fetched; keeping the last good one",
                metadata: ["owner": .string(owner), "url": .string(url), "problem": .string(problem.description), "lastGoodKept": .stringConvertible(kept)]
            )
            return nil
        }
    }
}

struct DocumentProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// JWK Sets of token issuers (host-token issuers, identity providers): a token whose `kid` the cached set lacks
/// waits for one refetch, so a rotation is picked up at once.
struct JWKSCache: Sendable {
    static let defaultFreshness: TimeInterval = 300
    private let documents: PublishedDocumentCache<JWKSet>

    init(fetcher: any DocumentFetcher, clock: any KeywardClock, logger: Logger) {
        documents = PublishedDocumentCache(kind: "issuer keys", fetcher: fetcher, clock: clock, logger: logger, defaultFreshness: Self.defaultFreshness) { body in
            do throws(JOSEError) {
                let keys = try JWKSet(json: body)
                return keys.keys.isEmpty ? .failure(DocumentProblem("the set holds no usable signature key")) : .success(keys)
            } catch {
                return .failure(DocumentProblem("not a JWK Set: \(error.message)"))
            }
        }
    }

    /// The set at `url` for a token of `owner` (named in logs) whose header names `kid`; nil when no keys can be had.
    func keys(url: String, owner: String, kid: String?) async -> JWKSet? {
        await documents.value(url: url, owner: owner) { keys in kid.map { !keys.keys(withID: $0).isEmpty } ?? true }
    }
}
