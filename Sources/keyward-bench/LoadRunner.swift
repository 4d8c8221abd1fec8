// Sending prepared requests over keep-alive connections and recording every latency and failure.
import Foundation

/// Sends prepared requests over `concurrency` keep-alive connections, one thread each, and records every
/// latency. Requests are built before the clock starts so proof signing does not compete with the server.
struct LoadRunner {
    let port: Int
    let concurrency: Int
    let threads: WorkerThreads

    struct Outcome {
        var latencies: [Duration] = []
        var failures = 0
        var elapsed: Duration = .zero
        var firstFailure: String?
        var cpu = CPUMeter.Times()

        /// A failed request, or a connection that could not be opened: counted, the first one's error kept.
        mutating func fail(_ error: any Error) {
            failures += 1
            firstFailure = firstFailure ?? "\(error)"
        }

        /// `count` round trips over one connection of their own, each timed from its start; a failed one is timed too,
        /// as `run` times every request, since the report's rate counts the timed ones less the failures.
        static func roundTrips(_ count: Int, port: Int, clock: ContinuousClock, _ roundTrip: (RawHTTPConnection) throws -> Void) -> Outcome {
            var outcome = Outcome()
            do {
                let connection = try RawHTTPConnection(port: port)
                for _ in 0..<count {
                    let begin = clock.now
                    do {
                        try roundTrip(connection)
                    } catch {
                        outcome.fail(error)
                    }
                    outcome.latencies.append(clock.now - begin)
                }
            } catch {
                outcome.fail(error)
            }
            return outcome
        }

        /// Another outcome's requests (latencies, failures, first failure) added to this one's.
        private mutating func addRequests(of other: Outcome) {
            latencies += other.latencies
            failures += other.failures
            firstFailure = firstFailure ?? other.firstFailure
        }

        /// This outcome and a later run's as one: time and CPU summed (CPU unknown when either run's is).
        func adding(_ later: Outcome) -> Outcome {
            func sum(_ first: Duration?, _ second: Duration?) -> Duration? { first.flatMap { first in second.map { first + $0 } } }
            var total = self
            total.addRequests(of: later)
            total.elapsed += later.elapsed
            total.cpu = CPUMeter.Times(server: sum(cpu.server, later.cpu.server), generator: sum(cpu.generator, later.cpu.generator))
            return total
        }

        /// Concurrent workers' outcomes as one, over the time and CPU they shared.
        static func merged(_ outcomes: [Outcome], elapsed: Duration, cpu: CPUMeter.Times) -> Outcome {
            var merged = Outcome(elapsed: elapsed, cpu: cpu)
            for outcome in outcomes { merged.addRequests(of: outcome) }
            return merged
        }
    }

    /// The `part`th of `parts` consecutive, nearly equal shares of `count` items (sizes differ by one at most).
    static func share(of count: Int, part: Int, parts: Int) -> Range<Int> {
        (count * part / parts)..<(count * (part + 1) / parts)
    }

    func run(_ requests: [[UInt8]], expecting status: Int) -> Outcome {
        let clock = ContinuousClock()
        let workers = (0..<concurrency).map { worker -> @Sendable () -> Outcome in
            let slice = Array(requests[Self.share(of: requests.count, part: worker, parts: concurrency)])
            return { [port] in
                var outcome = Outcome()
                outcome.latencies.reserveCapacity(slice.count)
                do {
                    let connection = try RawHTTPConnection(port: port)
                    for request in slice {
                        let begin = clock.now
                        let response = try connection.send(request)
                        outcome.latencies.append(clock.now - begin)
                        if response.status != status {
                            outcome.failures += 1
                            if outcome.firstFailure == nil { outcome.firstFailure = "\(response.status) \(String(decoding: response.body, as: UTF8.self))" }
                        }
                    }
                } catch {
                    outcome.failures += slice.count - outcome.latencies.count
                    outcome.firstFailure = outcome.firstFailure ?? "\(error)"
                }
                return outcome
            }
        }
        return threads.run(workers)
    }
}
