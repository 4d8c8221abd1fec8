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

        /// This outcome and a later run's as one: latencies and failures of both, time and CPU summed (CPU unknown
        /// when either run's is).
        func adding(_ later: Outcome) -> Outcome {
            func sum(_ first: Duration?, _ second: Duration?) -> Duration? { first.flatMap { first in second.map { first + $0 } } }
            return Outcome(
                latencies: latencies + later.latencies, failures: failures + later.failures, elapsed: elapsed + later.elapsed,
                firstFailure: firstFailure ?? later.firstFailure,
                cpu: CPUMeter.Times(server: sum(cpu.server, later.cpu.server), generator: sum(cpu.generator, later.cpu.generator))
            )
        }

        /// All workers' outcomes as one.
        static func merged(_ outcomes: [Outcome], elapsed: Duration, cpu: CPUMeter.Times) -> Outcome {
            var merged = Outcome(cpu: cpu)
            for outcome in outcomes {
                merged.latencies += outcome.latencies
                merged.failures += outcome.failures
                merged.firstFailure = merged.firstFailure ?? outcome.firstFailure
            }
            merged.elapsed = elapsed
            return merged
        }
    }

    func run(_ requests: [[UInt8]], expecting status: Int) -> Outcome {
        let clock = ContinuousClock()
        let perWorker = (requests.count + concurrency - 1) / concurrency
        let workers = (0..<concurrency).map { worker -> @Sendable () -> Outcome in
            let slice = Array(requests[min(worker * perWorker, requests.count)..<min((worker + 1) * perWorker, requests.count)])
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
