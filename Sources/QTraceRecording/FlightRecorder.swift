// The flight recorder's machinery (docs/flight-recorder.md): the rings of live programs found
// through /proc, their snapshots, and the rules `record` and `snapshot` share (sizes, signals,
// the snapshot files of a recording).
import ArgumentParser
import Foundation
import QTraceAnalysis
import QTraceFormat
#if canImport(Glibc)
import Glibc
#endif

public enum FlightRecorder {
    /// "64M", "4MiB", "512K", "1G", "1048576B"; a plain number is MiB (like --max-size).
    public static func parseSize(_ text: String) -> UInt64? {
        let lower = text.lowercased().trimmingCharacters(in: .whitespaces)
        let units: [(String, UInt64)] = [("gib", 1 << 30), ("mib", 1 << 20), ("kib", 1 << 10), ("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10), ("b", 1)]
        for (suffix, scale) in units where lower.hasSuffix(suffix) {
            guard let n = UInt64(lower.dropLast(suffix.count)), n > 0 else { return nil }
            return n.multipliedReportingOverflow(by: scale).overflow ? nil : n * scale
        }
        guard let n = UInt64(lower), n > 0, n < 1 << 40 else { return nil }
        return n << 20
    }

    /// QTRACE_SNAPSHOT_SIGNAL's value for --snapshot-signal: USR1, USR2, a number, or none.
    public static func signalSetting(_ text: String) -> String? {
        var name = text.uppercased()
        if name.hasPrefix("SIG") { name = String(name.dropFirst(3)) }
        if ["USR1", "USR2", "NONE"].contains(name) { return name.lowercased() == "none" ? "none" : name }
        if let n = Int32(name), n > 0, n < 65, n != SIGKILL, n != SIGSTOP { return String(n) }
        return nil
    }

    /// The signal the process's shim listens to (its QTRACE_SNAPSHOT_SIGNAL, else SIGUSR2).
    public static func snapshotSignal(ofProcess pid: Int32) throws -> Int32 {
        let setting = try environment(ofProcess: pid, command: "snapshot")["QTRACE_SNAPSHOT_SIGNAL"] ?? "USR2"
        switch signalSetting(setting.isEmpty ? "USR2" : setting) {
        case "USR1": return SIGUSR1
        case "USR2": return SIGUSR2
        case "none", nil:
            throw fail("snapshot", "process \(pid) takes no snapshot on a signal (--snapshot-signal none): it snapshots at a deadlock, a thread explosion or exit only")
        case let number?: return Int32(number) ?? SIGUSR2
        }
    }

    public struct LiveRing { public let path: String; public let pid: Int32 }

    /// The rings `target` names: a pid's (the ring file it maps; else its descendants' rings,
    /// so the pid of `qtrace record` works), or a ring file (its own pid).
    public static func liveRings(_ target: String) throws -> [LiveRing] {
        if let pid = Int32(target), !FileManager.default.fileExists(atPath: target) {
            guard FileManager.default.fileExists(atPath: "/proc/\(pid)/maps") else {
                throw fail("snapshot", "no process \(pid)")
            }
            if let ring = ring(ofProcess: pid) { return [ring] }
            let rings = descendants(of: pid).compactMap(ring(ofProcess:))
            guard !rings.isEmpty else { throw fail("snapshot", noRingMessage(pid)) }
            return rings
        }
        return [try liveRing(path: target)]
    }

    /// Why `pid` has no ring, from what the recording gave it (and its descendants: the pid
    /// may be qtrace record's): never advice to do what the user already did.
    public static func noRingMessage(_ pid: Int32) -> String {
        let environments = ([pid] + descendants(of: pid)).compactMap(readEnvironment(ofProcess:))
        if environments.contains(where: { ($0["QTRACE_RING_BYTES"] ?? "").isEmpty == false }) {
            return "process \(pid) is recorded with --ring but maps no ring yet: a process creates its ring at its first Dispatch call (a process that makes none has no ring); try again once it has made one"
        }
        if environments.contains(where: { ($0["QTRACE_OUTPUT"] ?? "").isEmpty == false }) {
            return "process \(pid) is recorded in full, not into a flight-recorder ring (qtrace record without --ring): its trace is on disk already, nothing to snapshot"
        }
        return "process \(pid) records no flight-recorder ring: start it with qtrace record --ring SIZE"
    }

    /// A /proc file's whole text: its size is 0 to stat, and Foundation's readers stop short
    /// of a long one (a 45 kB /proc/PID/maps came back cut).
    public static func readProcFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The ring file process `pid` maps, if any. Found by its header, whatever its name
    /// (-o may lack .qtrace): the ring is a regular file mapped shared, so only those are read.
    public static func ring(ofProcess pid: Int32) -> LiveRing? {
        guard let maps = readProcFile("/proc/\(pid)/maps") else { return nil }
        var seen: Set<String> = []
        for line in maps.split(separator: "\n") {
            // address perms offset dev inode path: the ring's perms are rw-s.
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, fields[1].hasSuffix("s"), let slash = line.firstIndex(of: "/") else { continue }
            let path = String(line[slash...])
            guard seen.insert(path).inserted, isRegularFile(path) else { continue }
            if let header = ringHeader(path), header.pid == pid { return LiveRing(path: path, pid: pid) }
        }
        return nil
    }

    /// Not a device, FIFO or socket: opening one of those to read a header could block or act.
    public static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// Children, grandchildren... of `pid` (from /proc/PID/task/*/children).
    public static func descendants(of pid: Int32) -> [Int32] {
        var result: [Int32] = [], pending = [pid]
        while let next = pending.popLast(), result.count < 10_000 {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(next)/task")) ?? []
            for task in tasks {
                let text = readProcFile("/proc/\(next)/task/\(task)/children") ?? ""
                let children = text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
                result += children
                pending += children
            }
        }
        return result
    }

    public static func liveRing(path target: String) throws -> LiveRing {
        guard let header = ringHeader(target) else {
            throw fail("snapshot", "'\(target)' is no live flight-recorder ring (a pid, or the TRACE.qtrace of qtrace record --ring)")
        }
        if header.ring?.snapshotTsc ?? 0 != 0 || header.flags.contains(.finalizedByProcess) || header.flags.contains(.finalizedByRecorder) {
            throw fail("snapshot", "'\(target)' is a finished trace, not a running program's ring")
        }
        return LiveRing(path: target, pid: header.pid)
    }

    /// The header of a ring file (nil: not a trace, or not a ring).
    public static func ringHeader(_ path: String) -> TraceHeader? {
        guard let header = try? TraceFile.readHeader(path: path) else { return nil }
        return header.flags.contains(.ring) ? header : nil
    }

    /// A snapshot whose header is written (the shim writes it after the chunks).
    public static func isCompleteSnapshot(_ path: String) -> Bool {
        (try? TraceFile.readHeader(path: path))?.flags.contains(.snapshot) ?? false
    }

    /// How many snapshots a live ring has written (its header says).
    public static func snapshotCount(ofRing path: String) -> UInt64 { ringHeader(path)?.ring?.snapshotCount ?? 0 }

    /// A snapshot's file name, TRACE.snapshot-N.qtrace, as its ring's stem (TRACE) and N.
    public static func snapshotName(_ file: String) -> (stem: Substring, number: Int)? {
        guard file.hasSuffix(".qtrace"), let marker = file.range(of: ".snapshot-", options: .backwards) else { return nil }
        let digits = file[marker.upperBound...].dropLast(7)
        guard !digits.isEmpty, digits.allSatisfy(\.isNumber), let number = Int(digits) else { return nil }
        return (file[..<marker.lowerBound], number)
    }

    /// TRACE.snapshot-N.qtrace beside the ring TRACE.qtrace (the shim's rule).
    public static func snapshotPath(ofRing path: String, number: UInt64) -> String {
        traceStem(path) + ".snapshot-\(number).qtrace"
    }

    /// The snapshots of a recording: TRACE.snapshot-N.qtrace and TRACE.PID[.N].snapshot-N.qtrace,
    /// by process then number.
    public static func snapshots(ofRecording tracePath: String) -> [String] {
        let url = URL(fileURLWithPath: tracePath)
        let dir = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        let base = traceStem(name)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.isEmpty ? "." : dir)) ?? []
        let found = names.compactMap { file -> (String, Int, String)? in
            guard let snapshot = snapshotName(file), snapshot.stem.hasPrefix(base) else { return nil }
            // The main trace's (TRACE), or a child's (TRACE.PID, TRACE.PID.N after an exec).
            let process = String(snapshot.stem.dropFirst(base.count))
            let parts = process.split(separator: ".", omittingEmptySubsequences: false).dropFirst()
            guard process.isEmpty || (process.hasPrefix(".") && (1...2).contains(parts.count)
                                      && parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isNumber) })) else { return nil }
            return (process, snapshot.number, (dir.isEmpty ? "" : dir + "/") + file)
        }
        return found.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map(\.2)
    }
}
