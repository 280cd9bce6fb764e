// `qtrace on` / `qtrace off`: switch the recording of a process started armed (`qtrace record
// --off`, or QTRACE_ARMED=1 with the shim preloaded). The switch is word 0 of a small control
// file that every process of the recording maps (docs/armed.md): writing it needs no signal
// and no cooperation from the program.
import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

public enum RecordingSwitch {
    /// The control file of a trace written by `qtrace record --off -o TRACE`.
    public static func controlPath(forTrace trace: String) -> String { trace + ".ctl" }

    /// A zeroed control file (recording off) for a program about to start armed.
    public static func create(_ path: String) throws {
        unlink(path)
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0, ftruncate(fd, 4096) == 0 else {
            let reason = String(cString: strerror(errno))
            if fd >= 0 { close(fd) }
            throw fail("record", "cannot create the control file '\(path)': \(reason)")
        }
        close(fd)
    }

    public static func set(_ target: String, recording: Bool, command: String) throws {
        let path = try controlFile(of: target, command: command)
        let fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        var value: Int32 = recording ? 1 : 0
        guard fd >= 0, pwrite(fd, &value, 4, 0) == 4 else {
            let reason = String(cString: strerror(errno))
            if fd >= 0 { close(fd) }
            throw fail(command, "cannot write the control file '\(path)': \(reason)")
        }
        close(fd)
        writeStderr("qtrace: recording \(recording ? "on" : "off") (\(path))\n")
    }

    /// The control file `target` names: a pid's (from its environment), a trace's, or itself.
    public static func controlFile(of target: String, command: String) throws -> String {
        if let pid = Int32(target), !FileManager.default.fileExists(atPath: target) {
            let variables = try environment(ofProcess: pid, command: command)
            guard let armed = variables["QTRACE_ARMED"], !armed.isEmpty, armed != "0" else {
                throw fail(command, "process \(pid) was not started armed: start it with qtrace record --off (or QTRACE_ARMED=1)")
            }
            if let control = variables["QTRACE_CONTROL"], !control.isEmpty { return control }
            if let output = variables["QTRACE_OUTPUT"], !output.isEmpty { return controlPath(forTrace: output) }
            throw fail(command, "process \(pid) has no QTRACE_CONTROL or QTRACE_OUTPUT: nothing to switch")
        }
        if target.hasSuffix(".ctl"), FileManager.default.fileExists(atPath: target) { return target }
        let beside = controlPath(forTrace: target)
        guard FileManager.default.fileExists(atPath: beside) else {
            throw fail(command, "no control file '\(beside)': was '\(target)' recorded with qtrace record --off?")
        }
        return beside
    }
}

/// The environment a running process started with (/proc/PID/environ): how `qtrace top PID`
/// and `qtrace on/off PID` find its trace and control file.
public func environment(ofProcess pid: Int32, command: String) throws -> [String: String] {
    guard let variables = readEnvironment(ofProcess: pid) else {
        throw fail(command, "no process \(pid) (or not allowed to read its environment)")
    }
    return variables
}

/// A process's environment, nil when it cannot be read (no such process, not ours).
public func readEnvironment(ofProcess pid: Int32) -> [String: String]? {
    guard let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return nil }
    var variables: [String: String] = [:]
    for entry in environ.split(separator: 0) {
        let text = String(decoding: entry, as: UTF8.self)
        if let equals = text.firstIndex(of: "=") { variables[String(text[..<equals])] = String(text[text.index(after: equals)...]) }
    }
    return variables
}
