// Parsing `perf script` output of the cpu-clock samples recorded by `qtrace record --cpu`
// (docs/cpu.md). With `-F pid,tid,cpu,time,ip,dso --ns --show-mmap-events` perf prints each
// sample as a header line, then one line per frame of its call chain, leaf first:
//   1234/1240 [001]  2004.852119570:
//   	            e663 (/path/to/app)
//   	ffffffff8161cd25 ([kernel.kallsyms])
// A user frame's address is relative to its mapping's file offset (perf's map_ip), so the
// mappings are read too:
//   1234/1234 [000]  2004.85: PERF_RECORD_MMAP2 1234/1234: [0x7f4d91be1000(0x26000) @ 0x1000 fe:00 332717 0]: r-xp /usr/lib/ld.so
// and turn it back into the process's absolute address (start + address − pgoff).

/// One frame as perf printed it: an address within `dso` (a file offset), or a kernel address.
public struct PerfFrame: Equatable, Sendable {
    public var address: UInt64
    public var dso: String
    public init(address: UInt64, dso: String) { self.address = address; self.dso = dso }

    /// perf's names for code outside any file it could map.
    public var isKernel: Bool { dso.hasPrefix("[kernel") || address >= 0xFFFF_8000_0000_0000 }
    public var isUnknown: Bool { dso == "[unknown]" }
}

/// One cpu-clock sample: times are CLOCK_MONOTONIC ns (perf record -k CLOCK_MONOTONIC).
public struct PerfSample: Equatable, Sendable {
    public var timeNs: UInt64
    public var cpu: Int
    public var pid: Int32
    public var tid: Int32
    /// Leaf first.
    public var frames: [PerfFrame]
    public init(timeNs: UInt64, cpu: Int, pid: Int32, tid: Int32, frames: [PerfFrame]) {
        self.timeNs = timeNs; self.cpu = cpu; self.pid = pid; self.tid = tid; self.frames = frames
    }
}

/// An executable mapping of a process (PERF_RECORD_MMAP/MMAP2).
public struct PerfMapping: Equatable, Sendable {
    public var pid: Int32
    public var start: UInt64
    public var length: UInt64
    public var pageOffset: UInt64
    public var path: String
    public init(pid: Int32, start: UInt64, length: UInt64, pageOffset: UInt64, path: String) {
        self.pid = pid; self.start = start; self.length = length; self.pageOffset = pageOffset; self.path = path
    }
}

/// Reads `perf script` lines one at a time: `consume` each, then `finish`.
public struct PerfSampleParser {
    /// The `perf script` options the parser expects.
    public static let arguments = ["--ns", "--show-mmap-events", "-F", "pid,tid,cpu,time,ip,dso"]

    public private(set) var samples: [PerfSample] = []
    public private(set) var mappings: [PerfMapping] = []
    /// Samples of other processes are dropped while reading (nil: keep all).
    let keepPids: Set<Int32>?
    private var current: PerfSample?

    public init(keepPids: Set<Int32>? = nil) { self.keepPids = keepPids }

    public mutating func consume(utf8 line: ArraySlice<UInt8>) {
        if let first = line.first, first == UInt8(ascii: "\t") {
            if current != nil, let frame = Self.frame(line) { current!.frames.append(frame) }
            return
        }
        finishSample()
        guard var header = Self.header(line) else { return }
        if let mapping = Self.mapping(header.rest, pid: header.sample.pid) {
            mappings.append(mapping)
        } else if header.rest.isEmpty, keepPids?.contains(header.sample.pid) ?? true {
            current = header.sample
        } else if let frame = Self.frame(header.rest), keepPids?.contains(header.sample.pid) ?? true {
            header.sample.frames = [frame]  // a sample without call chain: the ip on the same line
            samples.append(header.sample)
        }
    }

    public mutating func consume<S: StringProtocol>(_ line: S) { consume(utf8: Array(line.utf8)[...]) }

    public mutating func finish() { finishSample() }

    private mutating func finishSample() {
        if let sample = current { samples.append(sample) }
        current = nil
    }

    /// `PID/TID [CPU] SECONDS.NS:` as a sample without frames, and what follows it.
    static func header(_ line: ArraySlice<UInt8>) -> (sample: PerfSample, rest: ArraySlice<UInt8>)? {
        guard let h = PerfScriptParser.header(line) else { return nil }
        return (PerfSample(timeNs: h.timeNs, cpu: h.cpu, pid: h.pid, tid: h.tid, frames: []), h.rest)
    }

    /// `HEXADDRESS (DSO)`, after leading white space.
    static func frame(_ line: ArraySlice<UInt8>) -> PerfFrame? {
        var scanner = Scanner(line)
        scanner.skipBlanks()
        guard let address = scanner.hex() else { return nil }
        scanner.skipSpaces()
        let rest = scanner.remainder
        guard rest.first == UInt8(ascii: "("), rest.last == UInt8(ascii: ")") else { return nil }
        return PerfFrame(address: address, dso: String(decoding: rest.dropFirst().dropLast(), as: UTF8.self))
    }

    /// `PERF_RECORD_MMAP2 PID/TID: [0xSTART(0xLENGTH) @ PGOFF ...]: PROT PATH` (or MMAP),
    /// executable mappings only.
    static func mapping(_ text: ArraySlice<UInt8>, pid: Int32) -> PerfMapping? {
        var scanner = Scanner(text)
        guard scanner.take("PERF_RECORD_MMAP") else { return nil }
        _ = scanner.take("2")
        scanner.skipSpaces()
        guard let mapPid = scanner.signedInteger(), scanner.take("/"), scanner.signedInteger() != nil, scanner.take(": [0x"),
              let start = scanner.hex(), scanner.take("(0x"), let length = scanner.hex(), scanner.take(") @ ") else { return nil }
        guard let pageOffset = scanner.take("0x") ? scanner.hex() : scanner.hex() else { return nil }
        guard scanner.skip(past: "]: ") else { return nil }
        let rest = scanner.remainder
        guard let space = rest.firstIndex(of: UInt8(ascii: " ")) else { return nil }
        guard rest[rest.startIndex..<space].contains(UInt8(ascii: "x")) else { return nil }  // not executable
        return PerfMapping(pid: Int32(truncatingIfNeeded: mapPid), start: start, length: length, pageOffset: pageOffset,
                           path: String(decoding: rest[(space + 1)...], as: UTF8.self))
    }
}

extension Scanner {
    mutating func skipBlanks() {
        while at < bytes.endIndex, bytes[at] == UInt8(ascii: " ") || bytes[at] == UInt8(ascii: "\t") { at += 1 }
    }

    mutating func hex() -> UInt64? {
        var value: UInt64 = 0, digits = 0
        while at < bytes.endIndex, digits < 16 {
            let byte = bytes[at]
            let digit: UInt8
            switch byte {
            case 48...57: digit = byte - 48
            case 97...102: digit = byte - 87
            case 65...70: digit = byte - 55
            default: return digits > 0 ? value : nil
            }
            value = value << 4 | UInt64(digit)
            at += 1; digits += 1
        }
        return digits > 0 ? value : nil
    }

    mutating func signedInteger() -> Int? {
        let negative = take("-")
        return integer().map { negative ? -$0 : $0 }
    }

    /// Moves past the first occurrence of `literal`.
    mutating func skip(past literal: String) -> Bool {
        let wanted = Array(literal.utf8)
        var index = at
        while bytes.endIndex - index >= wanted.count {
            if bytes[index..<(index + wanted.count)].elementsEqual(wanted) { at = index + wanted.count; return true }
            index += 1
        }
        return false
    }
}
