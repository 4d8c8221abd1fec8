import Foundation
import KeywardJOSE
import Logging
import Synchronization

/// JWK Sets of token issuers (host-token issuers, identity providers), fetched from their URLs and cached per node.
///
/// A JWKS URL is fetched on first use and again when its freshness (the issuer's `Cache-Control: max-age`, held
/// between `minFreshness` and `maxFreshness`; `defaultFreshness` without one) has run out; a stale set keeps
/// answering while the refresh runs behind it. A token whose `kid` the cached set lacks waits for one refetch, so a
/// rotation is picked up at once. Every fetch, failed or not, is at least `minRefetchInterval` after the last one
/// for that URL, so neither junk kids nor an issuer that is down make Keyward hammer it. When a fetch fails the last
/// good set is kept; only an issuer never fetched successfully has no keys. Concurrent requests share one fetch.
///
/// Not an actor: the common case (a fresh cached set) is one lock and no hop to another executor.
final class JWKSCache: Sendable {
    static let defaultFreshness: TimeInterval = 300
    static let minFreshness: TimeInterval = 60
    static let maxFreshness: TimeInterval = 86400
    static let minRefetchInterval: TimeInterval = 10

    private struct CachedSet {
        var keys: JWKSet
        var freshUntil: Date
    }

    private struct State {
        var sets: [String: CachedSet] = [:]
        /// When each URL was last fetched or tried, successful or not.
        var lastAttempt: [String: Date] = [:]
        var inFlight: [String: Task<JWKSet?, Never>] = [:]
    }

    /// What a request does about a JWKS URL, decided under the lock.
    private enum Plan {
        case answer(JWKSet)
        /// Wait for a fetch; without a result, answer `fallback` or, without one, refuse.
        case wait(Task<JWKSet?, Never>, fallback: JWKSet?)
        case unavailable
    }

    private let fetcher: any DocumentFetcher
    private let clock: any KeywardClock
    private let logger: Logger
    private let state = Mutex(State())

    init(fetcher: any DocumentFetcher, clock: any KeywardClock, logger: Logger) {
        self.fetcher = fetcher
        self.clock = clock
        self.logger = logger
    }

    /// The set at `url` for a token of `owner` (named in logs) whose header names `kid`; nil when no keys can be had.
    func keys(url: String, owner issuer: String, kid: String?) async -> JWKSet? {
        let now = clock.now()
        let plan = state.withLock { state -> Plan in
            let triedJustNow = state.lastAttempt[url].map { now.timeIntervalSince($0) < Self.minRefetchInterval } ?? false
            guard let cached = state.sets[url] else {
                // Never fetched: wait for the fetch, but a failed one is not retried for every request that comes.
                if let running = state.inFlight[url] { return .wait(running, fallback: nil) }
                return triedJustNow ? .unavailable : .wait(startFetch(&state, url: url, issuer: issuer, now: now), fallback: nil)
            }
            let knowsKid = kid.map { !cached.keys.keys(withID: $0).isEmpty } ?? true
            if knowsKid {
                // Stale: answer from the set at hand and refresh behind it, so a slow issuer slows no exchange.
                if now >= cached.freshUntil, !triedJustNow, state.inFlight[url] == nil {
                    _ = startFetch(&state, url: url, issuer: issuer, now: now)
                }
                return .answer(cached.keys)
            }
            // A kid the set lacks (a rotation): one refetch, waited for, unless one was tried a moment ago.
            if let running = state.inFlight[url] { return .wait(running, fallback: cached.keys) }
            return triedJustNow ? .answer(cached.keys) : .wait(startFetch(&state, url: url, issuer: issuer, now: now), fallback: cached.keys)
        }
        switch plan {
        case .answer(let keys): return keys
        case .wait(let fetch, let fallback): return await fetch.value ?? fallback
        case .unavailable: return nil
        }
    }

    /// Starts the one fetch of `url` (called under the lock): the attempt is recorded at once, the task stores its
    /// result and clears itself.
    private func startFetch(_ state: inout State, url: String, issuer: String, now: Date) -> Task<JWKSet?, Never> {
        state.lastAttempt[url] = now
        let task = Task { await self.fetch(url: url, issuer: issuer) }
        state.inFlight[url] = task
        return task
    }

    /// One fetch; a failure keeps what was cached. nil when the fetch failed.
    private func fetch(url: String, issuer: String) async -> JWKSet? {
        let outcome = await Self.load(url, fetcher: fetcher)
        let now = clock.now()
        let cachedKeys = state.withLock { state -> Int in
            state.inFlight[url] = nil
            state.lastAttempt[url] = now
            if case .success(let document) = outcome {
                let freshness = document.maxAge.map { min(max(TimeInterval($0), Self.minFreshness), Self.maxFreshness) } ?? Self.defaultFreshness
                state.sets[url] = CachedSet(keys: document.keys, freshUntil: now.addingTimeInterval(freshness))
            }
            return state.sets[url]?.keys.keys.count ?? 0
        }
        switch outcome {
        case .success(let document):
            return document.keys
        case .failure(let problem):
            logger.warning(
                "issuer keys could not be fetched; keeping the last good set",
                metadata: ["issuer": .string(issuer), "problem": .string(problem.description), "cachedKeys": .stringConvertible(cachedKeys)]
            )
            return nil
        }
    }

    struct Loaded: Sendable {
        let keys: JWKSet
        let maxAge: Int?
    }

    private static func load(_ url: String, fetcher: any DocumentFetcher) async -> Result<Loaded, LoadProblem> {
        do throws(DocumentFetchError) {
            let document = try await fetcher.fetch(url)
            do throws(JOSEError) {
                let keys = try JWKSet(json: document.body)
                guard !keys.keys.isEmpty else { return .failure(LoadProblem("\(url) holds no usable signature key")) }
                return .success(Loaded(keys: keys, maxAge: document.maxAge))
            } catch {
                return .failure(LoadProblem("\(url) is not a JWK Set: \(error.message)"))
            }
        } catch {
            return .failure(LoadProblem(error.description))
        }
    }
}

struct LoadProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
