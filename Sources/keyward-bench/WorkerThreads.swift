// The load generator's worker threads, run at a lower priority and their outcomes merged with CPU time.
import Foundation
import Synchronization

/// The load generator's workers: one thread each, started together, their outcomes merged with the elapsed time
/// and the CPU time spent meanwhile.
///
/// Workers run at a lower scheduling priority (`nice`) than the server under test, so on the shared cores the
/// server is scheduled first, as it would be on a machine of its own. Time a worker spends waiting for the CPU
/// still counts in the latencies it records.
struct WorkerThreads: Sendable {
    let meter: CPUMeter
    let nice: Int32

    func run(_ workers: [@Sendable () -> LoadRunner.Outcome]) -> LoadRunner.Outcome {
        let clock = ContinuousClock()
        let outcomes = Mutex<[LoadRunner.Outcome]>([])
        let group = DispatchGroup()
        let cpuAtStart = meter.read()
        let started = clock.now
        for worker in workers {
            group.enter()
            let thread = Thread { [nice] in
                Self.lowerPriority(of: nice)
                let outcome = worker()
                outcomes.withLock { $0.append(outcome) }
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        return LoadRunner.Outcome.merged(outcomes.withLock { $0 }, elapsed: clock.now - started, cpu: meter.used(since: cpuAtStart))
    }

    /// Linux sets the nice value per thread: `who` 0 is the calling thread.
    private static func lowerPriority(of nice: Int32) {
        #if os(Linux)
        if nice > 0 { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice) }
        #endif
    }
}
