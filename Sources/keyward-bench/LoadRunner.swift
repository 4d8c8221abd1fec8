import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Sends prepared requests over `concurrency` keep-alive connections and records each latency.
/// Requests are built before the clock starts so proof signing does not compete with the server for CPU.
struct LoadRunner {
    let client: HTTPClient
    let concurrency: Int

    struct Outcome {
        var latencies: [Duration]
        var failures: Int
        var elapsed: Duration
        var firstFailure: String?
    }

    func run(_ requests: [HTTPClientRequest], expecting status: HTTPResponseStatus) async -> Outcome {
        let clock = ContinuousClock()
        let started = clock.now
        let perWorker = (requests.count + concurrency - 1) / concurrency
        let outcomes = await withTaskGroup(of: Outcome.self) { group in
            for worker in 0..<concurrency {
                let slice = requests[min(worker * perWorker, requests.count)..<min((worker + 1) * perWorker, requests.count)]
                group.addTask {
                    var outcome = Outcome(latencies: [], failures: 0, elapsed: .zero)
                    outcome.latencies.reserveCapacity(slice.count)
                    for request in slice {
                        let begin = clock.now
                        do {
                            let response = try await client.execute(request, timeout: .seconds(30))
                            let body = try await response.body.collect(upTo: 1 << 20)
                            if response.status != status {
                                outcome.failures += 1
                                if outcome.firstFailure == nil { outcome.firstFailure = "\(response.status.code) \(String(buffer: body))" }
                            }
                        } catch {
                            outcome.failures += 1
                            if outcome.firstFailure == nil { outcome.firstFailure = "\(error)" }
                        }
                        outcome.latencies.append(clock.now - begin)
                    }
                    return outcome
                }
            }
            var merged = Outcome(latencies: [], failures: 0, elapsed: .zero)
            for await outcome in group {
                merged.latencies += outcome.latencies
                merged.failures += outcome.failures
                merged.firstFailure = merged.firstFailure ?? outcome.firstFailure
            }
            return merged
        }
        var result = outcomes
        result.elapsed = clock.now - started
        return result
    }
}
