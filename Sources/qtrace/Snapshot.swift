// `qtrace snapshot PID|TRACE`: asks a program recorded with `qtrace record --ring SIZE` for a
// snapshot of its ring (docs/flight-recorder.md; the rings are QTraceRecording's FlightRecorder).
import ArgumentParser
import Foundation
import QTraceAnalysis
import QTraceFormat
import QTraceRecording
#if canImport(Glibc)
import Glibc
#endif

struct Snapshot: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Save the flight-recorder ring of a running program as a trace (qtrace record --ring).",
        discussion: """
        TARGET is the pid of a process recorded with qtrace record --ring SIZE (or of qtrace \
        record itself: then every process of the recording), or the path of its ring \
        (TRACE.qtrace, TRACE.PID.qtrace for a child). qtrace sends the process its \
        snapshot signal (SIGUSR2 unless --snapshot-signal said otherwise; kill -USR2 PID does the \
        same), waits for the shim to copy the ring, and prints the snapshot's path on stdout: \
        TRACE.snapshot-N.qtrace, a normal trace for stats, report and export. On stderr it says \
        which window the snapshot holds and how many earlier events were overwritten.
          qtrace record --ring 64M -o run.qtrace -- ./server &
          qtrace snapshot run.qtrace        (or: qtrace snapshot PID)
          qtrace report run.snapshot-1.qtrace
        """)

    @Argument(help: ArgumentHelp("A pid or the path of a live ring.", valueName: "target"))
    var target: String

    @Option(name: .long, help: ArgumentHelp("Seconds to wait for the snapshot.", valueName: "seconds"))
    var timeout: Double = 10

    func run() throws {
        for ring in try FlightRecorder.liveRings(target) { try snapshot(ring) }
    }

    func snapshot(_ ring: FlightRecorder.LiveRing) throws {
        let signal = try FlightRecorder.snapshotSignal(ofProcess: ring.pid)
        let before = FlightRecorder.snapshotCount(ofRing: ring.path)
        guard kill(ring.pid, signal) == 0 else {
            throw fail("snapshot", "cannot signal process \(ring.pid): \(String(cString: strerror(errno)))")
        }
        // Done when the ring counts it, or when the snapshot is complete (its header is written
        // last): a program that ends right after removes its ring but keeps the snapshot.
        let deadline = Date().addingTimeInterval(timeout)
        let next = FlightRecorder.snapshotPath(ofRing: ring.path, number: before + 1)
        var count = before
        while count == before && !FlightRecorder.isCompleteSnapshot(next) {
            if Date() > deadline || (kill(ring.pid, 0) != 0 && !FlightRecorder.isCompleteSnapshot(next)) {
                throw fail("snapshot", "process \(ring.pid) wrote no snapshot within \(timeout) s (stopped, ended, or it handles signal \(signal) itself?)")
            }
            usleep(20_000)
            count = FlightRecorder.snapshotCount(ofRing: ring.path)
        }
        let path = count > before ? FlightRecorder.snapshotPath(ofRing: ring.path, number: count) : next
        guard writeAll(STDOUT_FILENO, path + "\n") else { throw fail("snapshot", "cannot write to stdout") }
        // The window as `stats` gives it (TraceInfo: the trace's clock), without an analysis.
        if let window = (try? TraceFile(path: path)).flatMap({ TraceInfo(file: $0).flightRecorder }) {
            writeStderr("qtrace: \(window.summaryLine)\n")
        }
    }
}
