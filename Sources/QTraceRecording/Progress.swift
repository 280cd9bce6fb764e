// Long work on a terminal: a progress line on stderr (after a second), and Ctrl-C that stops
// cleanly (the partial output file removed, exit status 130, one line saying so).
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// "qtrace: analysing 42% (1.2M of 3.0M events)", then "qtrace: computing statistics (3 s)"
/// and so on: the current phase, redrawn by a timer so that a long phase without callbacks
/// (statistics, encoding) still shows that qtrace is working. Only on a terminal, and only
/// once the work has taken a second.
public final class ProgressLine: Sendable {
    public static let shared = ProgressLine()

    private struct State {
        var phase = ""
        var done = 0
        var total = 0
        var phaseStart = ContinuousClock.now
        var shown = false
        var timer: DispatchSourceTimer?
    }

    private let state = Mutex(State())
    private let enabled = isatty(STDERR_FILENO) == 1
    private let startedAt = ContinuousClock.now

    /// A new phase (events counted only while the model is built).
    public func phase(_ name: String, total: Int = 0) {
        guard enabled else { return }
        state.withLock { s in
            s.phase = name
            s.done = 0
            s.total = total
            s.phaseStart = .now
            if s.timer == nil { s.timer = startTimer() }
        }
        draw()
    }

    /// Events consumed so far in the current phase.
    public func events(_ done: Int) {
        guard enabled else { return }
        state.withLock { $0.done = done }
    }

    /// Stops redrawing and clears the line (before the command's own last words).
    public func finish() {
        guard enabled else { return }
        state.withLock { s in
            s.timer?.cancel()
            s.timer = nil
            if s.shown { writeStderr("\r\u{1b}[K") }
            s.shown = false
        }
    }

    private func startTimer() -> DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        timer.schedule(deadline: .now() + .milliseconds(250), repeating: .milliseconds(250))
        timer.setEventHandler { [weak self] in self?.draw() }
        timer.resume()
        return timer
    }

    private func draw() {
        guard ContinuousClock.now - startedAt > .seconds(1) else { return }
        state.withLock { s in
            guard s.timer != nil else { return }
            s.shown = true
            writeStderr("\rqtrace: " + Self.describe(s) + "\u{1b}[K")
        }
    }

    private static func describe(_ s: State) -> String {
        if s.total > 0 {
            let percent = min(100, s.done * 100 / s.total)
            return "\(s.phase) \(percent)% (\(millions(s.done)) of \(millions(s.total)) events)"
        }
        let seconds = (ContinuousClock.now - s.phaseStart).components.seconds
        return seconds >= 1 ? "\(s.phase) (\(seconds) s)" : s.phase
    }

    private static func millions(_ n: Int) -> String { "\(n / 1_000_000).\((n / 100_000) % 10)M" }
}

/// Ctrl-C (SIGINT) during `stats`, `report` or `export`: the output being written is removed
/// (it is a temporary name until complete: see `writeFile`), one line goes to stderr
/// and the exit status is 130 (128 + SIGINT). The handler only calls async-signal-safe
/// functions (write, unlink, _exit) on C strings prepared beforehand.
public enum Interruption {
    nonisolated(unsafe) private static var partialPath: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) private static var message: UnsafeMutablePointer<CChar>?

    public static func install(command: String) {
        let clear = isatty(STDERR_FILENO) == 1 ? "\r\u{1b}[K" : ""
        message = strdup(clear + "qtrace \(command): interrupted\n")
        signal(SIGINT) { _ in
            if let path = Interruption.partialPath { unlink(path) }
            if let message = Interruption.message { _ = write(STDERR_FILENO, message, strlen(message)) }
            _exit(130)
        }
    }

    /// The file to remove if interrupted (nil: none).
    public static func writing(_ path: String?) {
        let old = partialPath
        partialPath = path.map { strdup($0) }
        free(old)
    }
}
