// A scenario's prebuilt requests, and running several loads whole or in alternating turns.
import Foundation

/// A scenario's requests, all built before the first is sent, and the status each must answer.
struct PreparedLoad {
    let name: String
    let requests: [[UInt8]]
    let expecting: Int
    /// Runs once the load has been sent (host-token: stops its JWKS responder and says how often it was fetched).
    var finished: () -> Void = {}
}

/// Sends prepared loads and turns their outcomes into results: one after the other, or in turns.
struct LoadTurns {
    let runner: LoadRunner
    let log: (String) -> Void

    /// `rounds` 1: each load whole, one after the other. More: each load's requests are cut into `rounds` slices in
    /// order and the loads take turns slice by slice, so a shared machine whose speed drifts during the run slows
    /// them alike and their rates stay comparable; a load's figures are the sum of its slices. Each turn opens its
    /// connections and ends with its slowest connection, as a whole run does once: keep turns to a second or more,
    /// and compare `rounds` figures with each other rather than with whole runs.
    func run(_ loads: [PreparedLoad], rounds: Int) -> [ScenarioResult] {
        var outcomes: [LoadRunner.Outcome?] = loads.map { _ in nil }
        for round in 0..<rounds {
            for (index, load) in loads.enumerated() {
                let slice = LoadRunner.share(of: load.requests.count, part: round, parts: rounds)
                if rounds > 1 { log("\(load.name): turn \(round + 1)/\(rounds), requests \(slice.lowerBound + 1)–\(slice.upperBound)") }
                let outcome = runner.run(Array(load.requests[slice]), expecting: load.expecting)
                outcomes[index] = outcomes[index].map { $0.adding(outcome) } ?? outcome
            }
        }
        for load in loads { load.finished() }
        return zip(loads, outcomes).map { ScenarioResult(name: $0.name, outcome: $1 ?? LoadRunner.Outcome()) }
    }
}
