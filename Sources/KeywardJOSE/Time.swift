/// Claims larger than this (about year 5138) or negative are treated as garbage rather than as times,
/// so that `exp: 1e300` cannot mean "never expires".
let maxReasonableTimestamp: Double = 1e11

func isReasonableTimestamp(_ value: Double) -> Bool {
    value.isFinite && value >= 0 && value <= maxReasonableTimestamp
}
