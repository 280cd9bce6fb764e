// Phase times of a run, for scripts/bench-phases.py: with QTRACE_PHASES=1 in the environment
// each timed phase prints one line on stderr, `qtrace phase: NAME<TAB>WALL<TAB>CPU<TAB>PEAK`
// (seconds; CPU is the process's, user + system, all threads; PEAK the process's peak resident
// memory so far in KiB, so that the phase where memory peaks can be read). Undocumented to users: a profiling aid
// whose output may change. Off, a phase costs one test of a constant.
#if canImport(Glibc)
import Glibc
#endif

public enum Phases {
    public static let enabled: Bool = getenv("QTRACE_PHASES").map { String(cString: $0) == "1" } ?? false

    /// Runs `body`, printing its wall and CPU time under `name` when enabled.
    @inline(__always)
    public static func time<T>(_ name: String, _ body: () throws -> T) rethrows -> T {
        guard enabled else { return try body() }
        let (wall, cpu) = (clock(CLOCK_MONOTONIC), clock(CLOCK_PROCESS_CPUTIME_ID))
        defer { report(name, wall: clock(CLOCK_MONOTONIC) - wall, cpu: clock(CLOCK_PROCESS_CPUTIME_ID) - cpu) }
        return try body()
    }

    private static func clock(_ id: clockid_t) -> Double {
        var t = timespec()
        clock_gettime(id, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    private static func report(_ name: String, wall: Double, cpu: Double) {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        var line = "qtrace phase: \(name)\t\(wall)\t\(cpu)\t\(usage.ru_maxrss)\n"
        line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
    }
}
