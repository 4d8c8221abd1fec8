import Foundation
import KeywardJOSE
import Logging

/// The verification keys of host-token issuers, cached per node.
///
/// A JWKS URL is fetched on first use and again when its freshness (the issuer's `Cache-Control: max-age`, held
/// between `minFreshness` and `maxFreshness`; `defaultFreshness` without one) has run out; a stale set keeps
/// answering while the refresh runs behind it. A token whose `kid` the cached set lacks waits for one refetch, so a
/// rotation is picked up at once. Every fetch, failed or not, is at least `minRefetchInterval` after the last one
/// for that URL, so neither junk kids nor an issuer that is down make Keyward hammer it. When a fetch fails the last
/// good set is kept; only an issuer never fetched successfully has no keys. Concurrent requests share one fetch.
/// PEM certificates are parsed once per distinct text.
actor HostIssuerKeys {
    static let defaultFreshness: TimeInterval = 300
    static let minFreshness: TimeInterval = 60
    static let maxFreshness: TimeInterval = 86400
    static let minRefetchInterval: TimeInterval = 10

    private struct CachedSet {
        var keys: JWKSet
        var freshUntil: Date
    }

    private let fetcher: any JWKSFetcher
    private let clock: any KeywardClock
    private let logger: Logger
    private var sets: [String: CachedSet] = [:]
    /// When each URL was last fetched or tried, successful or not.
    private var lastAttempt: [String: Date] = [:]
    private var inFlight: [String: Task<Result<Loaded, LoadProblem>, Never>] = [:]
    private var certificates: [String: IssuerCertificates] = [:]

    init(fetcher: any JWKSFetcher, clock: any KeywardClock, logger: Logger) {
        self.fetcher = fetcher
        self.clock = clock
        self.logger = logger
    }

    /// The keys a token of `issuer` with header `kid` is checked with.
    func keys(for issuer: HostIssuer, kid: String?) async throws(HostTokenRefusal) -> JWTVerificationPolicy.Keys {
        let now = clock.now()
        switch issuer.keySource {
        case .pemCertificates(let pem):
            return try certificates(pem, issuer: issuer.issuer).keys(kid: kid, now: now, issuer: issuer.issuer)
        case .jwksURL(let url):
            return .kidOptional(try await keySet(url: url, issuer: issuer.issuer, kid: kid, now: now))
        }
    }

    private func certificates(_ pem: String, issuer: String) throws(HostTokenRefusal) -> IssuerCertificates {
        if let parsed = certificates[pem] { return parsed }
        do throws(HostIssuerError) {
            let parsed = try IssuerCertificates(pem: pem)
            certificates[pem] = parsed
            return parsed
        } catch {
            // Checked when the issuer was added; reaching this means the stored row was changed by hand.
            throw HostTokenRefusal(.keysUnavailable, "the certificates registered for issuer \(issuer) cannot be read: \(error)")
        }
    }

    private func keySet(url: String, issuer: String, kid: String?, now: Date) async throws(HostTokenRefusal) -> JWKSet {
        let triedJustNow = lastAttempt[url].map { now.timeIntervalSince($0) < Self.minRefetchInterval } ?? false
        guard let cached = sets[url] else {
            // Never fetched: wait for the fetch, but a failed one is not retried for every request that comes.
            if !triedJustNow, let fetched = await refetch(url: url, issuer: issuer) { return fetched }
            throw HostTokenRefusal(.keysUnavailable, "the keys of issuer \(issuer) cannot be fetched now; try again later")
        }
        let knowsKid = kid.map { !cached.keys.keys(withID: $0).isEmpty } ?? true
        if knowsKid {
            // Stale: answer from the set at hand and refresh behind it, so a slow issuer slows no exchange.
            if now >= cached.freshUntil && !triedJustNow && inFlight[url] == nil {
                lastAttempt[url] = now
                Task { _ = await self.refetch(url: url, issuer: issuer) }
            }
            return cached.keys
        }
        // A kid the set lacks (a rotation): one refetch, waited for, unless one was tried a moment ago.
        if !triedJustNow, let refreshed = await refetch(url: url, issuer: issuer) { return refreshed }
        return cached.keys
    }

    /// One fetch per URL at a time; a failure keeps what was cached. nil when the fetch failed.
    private func refetch(url: String, issuer: String) async -> JWKSet? {
        if let running = inFlight[url] { return try? await running.value.get().keys }
        let task = Task { [fetcher] in await Self.load(url, fetcher: fetcher) }
        inFlight[url] = task
        let outcome = await task.value
        inFlight[url] = nil
        let now = clock.now()
        lastAttempt[url] = now
        switch outcome {
        case .success(let document):
            let freshness = document.maxAge.map { min(max(TimeInterval($0), Self.minFreshness), Self.maxFreshness) } ?? Self.defaultFreshness
            sets[url] = CachedSet(keys: document.keys, freshUntil: now.addingTimeInterval(freshness))
            return document.keys
        case .failure(let problem):
            logger.warning(
                "host-token issuer keys could not be fetched; keeping the last good set",
                metadata: ["issuer": .string(issuer), "problem": .string(problem.description), "cachedKeys": .stringConvertible(sets[url]?.keys.keys.count ?? 0)]
            )
            return nil
        }
    }

    struct Loaded: Sendable {
        let keys: JWKSet
        let maxAge: Int?
    }

    private static func load(_ url: String, fetcher: any JWKSFetcher) async -> Result<Loaded, LoadProblem> {
        do throws(JWKSFetchError) {
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
