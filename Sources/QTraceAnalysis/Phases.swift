// Phase times of a run, for scripts/bench-phases.py: with QTRACE_PHASES=1 in the environment
// each timed phase prints one line on stderr, `qtrace phase: NAME<TAB>WALL<TAB>CPU<TAB>PEAK<TAB>NOW`
// (seconds; CPU is the process's, user + system, all threads; PEAK the process's peak resident
// memory so far and NOW its resident memory at the end of the phase, in KiB, so that the phase
// where memory peaks, and what a phase freed, can be read). Undocumented to users: a profiling
// aid whose output may change. Off, a phase costs one test of a constant.
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

    /// The start of a phase whose body cannot be a closure (it consumes a value, which a
    /// closure would keep a copy of): `let started = Phases.start()`, the body, then
    /// `Phases.end("name", started)`. nil when disabled.
    public struct Started {
        let wall: Double, cpu: Double
    }

    public static func start() -> Started? {
        enabled ? Started(wall: clock(CLOCK_MONOTONIC), cpu: clock(CLOCK_PROCESS_CPUTIME_ID)) : nil
    }

    public static func end(_ name: String, _ started: Started?) {
        guard let started else { return }
        report(name, wall: clock(CLOCK_MONOTONIC) - started.wall, cpu: clock(CLOCK_PROCESS_CPUTIME_ID) - started.cpu)
    }

    /// A figure measured elsewhere (e.g. one thread's share of a phase), printed as a phase.
    public static func note(_ name: String, wall: Double, cpu: Double) {
        if enabled { report(name, wall: wall, cpu: cpu) }
    }

    private static func clock(_ id: clockid_t) -> Double {
        var t = timespec()
        clock_gettime(id, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    private static func report(_ name: String, wall: Double, cpu: Double) {
        let resident = residentKiB()
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        var line = "qtrace phase: \(name)\t\(wall)\t\(cpu)\t\(usage.ru_maxrss)\t\(resident)\n"
        line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
    }

    /// The process's resident memory now, in KiB (/proc/self/statm's second field, in pages);
    /// -1 where there is none. Beside the peak, it tells what a phase freed.
    private static func residentKiB() -> Int {
        let fd = open("/proc/self/statm", O_RDONLY)
        guard fd >= 0 else { return -1 }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = read(fd, &buffer, buffer.count)
        let fields = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return -1 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }
}
