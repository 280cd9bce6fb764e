// Runs the traced program as a child: same stdin/stdout/stderr, signals reach it, and its
// exit status becomes ours.
import ArgumentParser
import CQTraceSys
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The child to forward signals to (a signal handler cannot capture context).
nonisolated(unsafe) private var forwardTarget: pid_t = 0

public enum ChildProcess {
    /// Runs `argv` with `environment` and returns its status: the exit code, or 128+N when it
    /// died of signal N. `started` is told the child's pid.
    public static func run(_ argv: [String], environment: [String: String], started: (pid_t) -> Void = { _ in }) throws -> Int32 {
        let pid = try spawn(argv, environment: environment, actions: nil)
        forwardTarget = pid
        started(pid)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { throw ValidationError("waitpid failed: \(String(cString: strerror(errno)))") }
        }
        forwardTarget = 0
        return exitStatus(status)
    }

    /// Starts `argv` with stdout and stderr into `outputPath` (created or truncated; stdin is
    /// /dev/null) and returns at once: `qtrace top` draws while it runs.
    public static func start(_ argv: [String], environment: [String: String], outputPath: String) throws -> RunningChild {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO)
        let pid = try spawn(argv, environment: environment, actions: &actions)
        forwardTarget = pid
        return RunningChild(pid: pid)
    }

    /// posix_spawnp with default signal dispositions in the child whatever ours are.
    private static func spawn(_ argv: [String], environment: [String: String],
                              actions: UnsafePointer<posix_spawn_file_actions_t>?) throws -> pid_t {
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for sig in [SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE] { sigaddset(&defaults, sig) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGDEF))

        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (cArgs + cEnv).forEach { free($0) } }

        installSignalHandlers()
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, argv[0], actions, &attr, cArgs, cEnv)
        guard rc == 0 else {
            printErr("qtrace: error: cannot run '\(argv[0])': \(String(cString: strerror(rc))) (check the path, or that it is executable)")
            throw ExitCode(rc == ENOENT ? 127 : 126)
        }
        return pid
    }

    /// The exit code, or 128+N when the process died of signal N.
    public static func exitStatus(_ status: Int32) -> Int32 {
        if qt_sys_wifexited(status) != 0 { return qt_sys_wexitstatus(status) }
        if qt_sys_wifsignaled(status) != 0 { return 128 + qt_sys_wtermsig(status) }
        return 1
    }

    /// SIGINT, SIGQUIT, SIGTERM and SIGHUP sent to qtrace are passed on to the program, once:
    /// qtrace survives them to finish the trace, and the program decides what they mean.
    private static func installSignalHandlers() {
        var action = sigaction()
        action.__sigaction_handler.sa_sigaction = { sig, info, _ in
            if shouldForward(code: info.map { Int($0.pointee.si_code) } ?? SI_USER, sender: info?.pointee._sifields._kill.si_pid ?? 0, signal: sig) {
                kill(forwardTarget, sig)
            }
        }
        action.sa_flags = SA_SIGINFO | SA_RESTART
        sigemptyset(&action.sa_mask)
        for sig in [SIGINT, SIGQUIT, SIGTERM, SIGHUP] { sigaction(sig, &action, nil) }
    }
}

/// Whether a signal qtrace received must be passed on (called in the signal handler: only
/// async-signal-safe calls). The terminal's signals (si_code SI_KERNEL: Ctrl-C, Ctrl-\, the
/// hangup when the session leader exits) go to the whole foreground process group, which
/// the program shares with qtrace: it has its own copy, and a second would count twice. Any
/// other sender (kill, systemd, a supervisor) targeted qtrace alone. Two exceptions: the
/// program itself signalling qtrace gets nothing back, and a terminal hangup reaches only
/// session leaders, so when qtrace leads its session (setsid, a pty) the program needs it.
private func shouldForward(code: Int, sender: pid_t, signal: Int32) -> Bool {
    guard forwardTarget > 0, sender != forwardTarget else { return false }
    guard code == SI_KERNEL else { return true }
    return signal == SIGHUP && getsid(0) == getpid()
}

/// A child started by `ChildProcess.start`.
public final class RunningChild {
    public let pid: pid_t
    private var status: Int32?

    public init(pid: pid_t) { self.pid = pid }

    /// Reaps the child if it has exited (without waiting).
    public func hasExited() -> Bool {
        if status != nil { return true }
        var raw: Int32 = 0
        if waitpid(pid, &raw, WNOHANG) == pid { status = ChildProcess.exitStatus(raw) }
        return status != nil
    }

    /// Ctrl-C for the program (the q key of `qtrace top`).
    public func interrupt() { if status == nil { kill(pid, SIGINT) } }

    /// Waits for the exit; its status.
    public func wait() -> Int32 {
        var raw: Int32 = 0
        while status == nil {
            if waitpid(pid, &raw, 0) == pid { status = ChildProcess.exitStatus(raw) } else if errno != EINTR { status = 1 }
        }
        forwardTarget = 0
        return status!
    }
}
