// The CPU time the server and the load generator spend during a measurement, read from /proc.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// CPU time (user + system) used by the server process and by this load generator during a measurement, read
/// from /proc. Beside requests per second it says what each request cost, which stays comparable when the
/// machine's other load changes the throughput. A database server's own processes are not counted.
struct CPUMeter: Sendable {
    /// The server's process id; nil when the server was not started here (--url), whose CPU is then not known.
    let serverPID: Int32?

    struct Times: Sendable {
        var server: Duration?
        var generator: Duration?
    }

    func read() -> Times {
        Times(server: serverPID.flatMap { Self.cpuTime(of: String($0)) }, generator: Self.cpuTime(of: "self"))
    }

    func used(since start: Times) -> Times {
        let now = read()
        func difference(_ end: Duration?, _ begin: Duration?) -> Duration? {
            guard let end, let begin else { return nil }
            return end - begin
        }
        return Times(server: difference(now.server, start.server), generator: difference(now.generator, start.generator))
    }

    /// utime + stime of /proc/PID/stat: fields 14 and 15, counted after the parenthesised command name (which may
    /// itself contain spaces).
    private static func cpuTime(of process: String) -> Duration? {
        guard let stat = try? String(contentsOfFile: "/proc/\(process)/stat", encoding: .utf8),
            let commandEnd = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: commandEnd)...].split(separator: " ")
        // After the command: state is field 3 of the line, so utime (14) and stime (15) are at 11 and 12 here.
        guard fields.count > 12, let user = Int64(fields[11]), let system = Int64(fields[12]) else { return nil }
        let ticksPerSecond = Int64(sysconf(Int32(_SC_CLK_TCK)))
        guard ticksPerSecond > 0 else { return nil }
        return .milliseconds((user + system) * 1000 / ticksPerSecond)
    }
}
