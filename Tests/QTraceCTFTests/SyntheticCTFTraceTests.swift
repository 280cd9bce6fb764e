// CTF layouts LTTng-UST rarely produces here, written byte by byte and read by both decoders
// (libbabeltrace2 is the reference): the compact event header (5-bit id, 27-bit timestamp that
// wraps every 134 ms) with extended headers, several packets per stream with padding and
// discarded events, equal timestamps in two streams, packetized metadata, text sequences with
// a NUL inside and invalid UTF-8. Then the same trace truncated or corrupted: errors, no crash.
import Foundation
@testable import QTraceCTF
import QTraceFormat
import XCTest

final class SyntheticCTFTraceTests: XCTestCase {
    override class func tearDown() {
        TestPaths.cleanUp()
        super.tearDown()
    }

    func testCompactHeadersPacketsAndTiesMatchBabeltrace() throws {
        let dir = TestPaths.tempDir("synthetic")
        let trace = SyntheticTrace()
        try trace.write(to: dir.path, packetizedMetadata: false)
        try assertDecodersAgree(dir.path)
        let read = try CTFTraceReader(path: dir.path, decoder: .purposeBuilt).read()
        XCTAssertEqual(read.events.map(\.time), trace.expectedTimes, "27-bit timestamps unwrapped")
        XCTAssertEqual(read.events.filter { $0.tid == 101 }.count, SyntheticTrace.records - 1)
        XCTAssertEqual(read.process.lttngDiscardedEvents, 7)
        XCTAssertEqual(read.process.unknownRecordCount, 1)
        let strings = read.events.compactMap(\.string)
        XCTAssertEqual(strings, ["lab\u{FFFD}l", "ab"], "invalid UTF-8 replaced; a text sequence ends at its NUL")
    }

    /// The CTF fuzzer's seeds (Fuzz/corpus/ctf, docs/fuzzing.md) are this trace, written into
    /// $QTRACE_WRITE_FUZZ_SEEDS when set; `qtrace-fuzz` packs them (CTFInput).
    func testWritesTheFuzzSeedsWhenAsked() throws {
        guard let out = ProcessInfo.processInfo.environment["QTRACE_WRITE_FUZZ_SEEDS"] else {
            throw XCTSkip("QTRACE_WRITE_FUZZ_SEEDS not set")
        }
        for packetized in [false, true] {
            try SyntheticTrace().write(to: out + (packetized ? "/packetized" : "/plain"), packetizedMetadata: packetized)
        }
    }

    func testPacketizedMetadata() throws {
        let dir = TestPaths.tempDir("packetized")
        try SyntheticTrace().write(to: dir.path, packetizedMetadata: true)
        try assertDecodersAgree(dir.path)
    }

    /// Truncated or overwritten stream files and metadata: a one-line error from either decoder
    /// choice, never a crash or a hang.
    func testCorruptInputGivesErrors() throws {
        let dir = TestPaths.tempDir("corrupt")
        let trace = SyntheticTrace()
        let stream = dir.appendingPathComponent("stream_0").path
        let cases: [(String, (inout Data) -> Void, String)] = [
            ("truncated inside the last packet", { $0 = $0.dropLast(100) }, "stream_0"),
            ("truncated inside the first event", { $0 = $0.prefix(120) }, "stream_0"),
            ("bad packet magic", { $0[0] = 0x42 }, "stream_0"),
            ("packet size of zero", { data in data.replaceSubrange(56..<64, with: [UInt8](repeating: 0, count: 8)) }, "stream_0"),
            ("content larger than the packet", { data in data.replaceSubrange(48..<56, with: [0, 0, 0, 0, 0, 0, 1, 0]) }, "stream_0"),
            ("content ending inside an event", { data in data.replaceSubrange(48..<56, with: [0x10, 0x03, 0, 0, 0, 0, 0, 0]) }, "stream_0"),
            ("unknown event id", { data in data[84] = 0x1E }, "stream_0"),
            ("garbage events", { data in for i in 84..<400 { data[i] = UInt8(truncatingIfNeeded: i &* 37) } }, "stream_0"),
        ]
        for (name, damage, _) in cases {
            try trace.write(to: dir.path, packetizedMetadata: false)
            var data = try Data(contentsOf: URL(fileURLWithPath: stream))
            damage(&data)
            try data.write(to: URL(fileURLWithPath: stream))
            XCTAssertThrowsError(try CTFTraceReader(path: dir.path, decoder: .purposeBuilt).read(), name) { error in
                guard case .corrupt(let message)? = error as? CTFReadError else { return XCTFail("\(name): \(error)") }
                XCTAssertFalse(message.contains("\n"), "\(name): one line")
                XCTAssertTrue(message.contains("stream_0"), "\(name): names the file: \(message)")
            }
        }
        // Metadata the purpose-built decoder cannot parse is left to libbabeltrace2, whose
        // error is reported (automatic choice); required, it is an error of its own.
        for (name, metadata) in [("truncated metadata", String(trace.metadata.dropLast(200))),
                                 ("garbage metadata", "/* CTF 1.8 */ \"qtrace: trace { ]]] ;")] {
            try trace.write(to: dir.path, packetizedMetadata: false)
            try Data(metadata.utf8).write(to: dir.appendingPathComponent("metadata"))
            XCTAssertThrowsError(try CTFTraceReader(path: dir.path).read(), name) { error in
                XCTAssertNotNil(error as? CTFReadError, "\(name): \(error)")
            }
            XCTAssertThrowsError(try CTFTraceReader(path: dir.path, decoder: .purposeBuilt).read(), name) { error in
                guard case .unsupported? = error as? CTFReadError else { return XCTFail("\(name): \(error)") }
            }
        }
    }

    func testBitFieldsAndClockWraparound() {
        let bytes: [UInt8] = [0b1110_0101, 0xFF, 0x00, 0x12, 0x34]
        bytes.withUnsafeBytes { raw in
            let base = raw.baseAddress!
            XCTAssertEqual(CTFInterpreter.readLittleEndian(base, 0, 5), 0b00101)
            XCTAssertEqual(CTFInterpreter.readLittleEndian(base, 5, 27), (0x3412_00FF << 3 | 0b111) & ((1 << 27) - 1))
            XCTAssertEqual(CTFInterpreter.readBigEndian(base, 0, 3), 0b111)
            XCTAssertEqual(CTFInterpreter.readBigEndian(base, 3, 13), 0b0_0101_1111_1111)
        }
        var clock: UInt64 = 0x1_07FF_FFF0
        CTFInterpreter.updateClock(&clock, 0x10, 27)
        XCTAssertEqual(clock, 0x1_0800_0010, "a smaller 27-bit value means the low bits wrapped")
        CTFInterpreter.updateClock(&clock, 0x20, 27)
        XCTAssertEqual(clock, 0x1_0800_0020)
        CTFInterpreter.updateClock(&clock, 5, 64)
        XCTAssertEqual(clock, 5)
    }
}

/// A two-stream CTF trace in LTTng-UST's layout with the compact event header.
struct SyntheticTrace {
    static let uuid: [UInt8] = [0x2a, 0x1b, 0x3c, 0x4d, 0x5e, 0x6f, 0x70, 0x81, 0x92, 0xa3, 0xb4, 0xc5, 0xd6, 0xe7, 0xf8, 0x09]
    static let start: UInt64 = 5_000_000_000
    /// 40 ms apart: the 27-bit timestamp (134 ms) wraps every few events.
    static let step: UInt64 = 40_000_000
    static let records = 40

    var metadata: String {
        """
        /* CTF 1.8 */
        typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
        typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
        typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
        typealias integer { size = 64; align = 8; signed = false; } := unsigned long;
        typealias integer { size = 5; align = 1; signed = false; } := uint5_t;
        typealias integer { size = 27; align = 1; signed = false; } := uint27_t;
        trace {
            major = 1; minor = 8;
            uuid = "2a1b3c4d-5e6f-7081-92a3-b4c5d6e7f809";
            byte_order = le;
            packet.header := struct { uint32_t magic; uint8_t uuid[16]; uint32_t stream_id; uint64_t stream_instance_id; };
        };
        env { domain = "ust"; tracer_name = "lttng-ust"; hostname = "synthetic"; };
        clock { name = "monotonic"; freq = 1000000000; offset = 1700000000000000000; };
        typealias integer { size = 27; align = 1; signed = false; map = clock.monotonic.value; } := uint27_clock_monotonic_t;
        typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_monotonic_t;
        struct packet_context {
            uint64_clock_monotonic_t timestamp_begin;
            uint64_clock_monotonic_t timestamp_end;
            uint64_t content_size;
            uint64_t packet_size;
            uint64_t packet_seq_num;
            unsigned long events_discarded;
            uint32_t cpu_id;
        };
        struct event_header_compact {
            enum : uint5_t { compact = 0 ... 30, extended = 31 } id;
            variant <id> {
                struct { uint27_clock_monotonic_t timestamp; } compact;
                struct { uint32_t id; uint64_clock_monotonic_t timestamp; } extended;
            } v;
        } align(8);
        stream {
            id = 0;
            event.header := struct event_header_compact;
            packet.context := struct packet_context;
            event.context := struct { integer { size = 32; align = 8; signed = 1; encoding = none; base = 10; } _vtid; };
        };
        event {
            name = "qtrace:record1"; id = 0; stream_id = 0; loglevel = 13;
            fields := struct {
                integer { size = 8; align = 8; signed = 0; encoding = none; base = 10; } _type;
                integer { size = 8; align = 8; signed = 0; encoding = none; base = 10; } _flags;
                integer { size = 32; align = 8; signed = 0; encoding = none; base = 10; } _arg;
                integer { size = 64; align = 8; signed = 0; encoding = none; base = 10; } _a;
            };
        };
        event {
            name = "other:thing"; id = 1; stream_id = 0;
            fields := struct { string _what; integer { size = 16; align = 16; signed = 1; } _n[3]; };
        };
        event {
            name = "qtrace:record_string"; id = 2; stream_id = 0; loglevel = 13;
            fields := struct {
                integer { size = 8; align = 8; signed = 0; encoding = none; base = 10; } _type;
                integer { size = 8; align = 8; signed = 0; encoding = none; base = 10; } _flags;
                integer { size = 32; align = 8; signed = 0; encoding = none; base = 10; } _arg;
                integer { size = 8; align = 8; signed = 0; encoding = none; base = 10; } __words_length;
                integer { size = 64; align = 8; signed = 0; encoding = none; base = 10; } _words[ __words_length ];
                integer { size = 32; align = 8; signed = 0; encoding = none; base = 10; } __text_length;
                integer { size = 8; align = 8; signed = 1; encoding = UTF8; base = 10; } _text[ __text_length ];
            };
        };
        event {
            name = "qtrace:process"; id = 40; stream_id = 0; loglevel = 13;
            fields := struct {
                uint32_t _pid; uint32_t _ppid; uint32_t _ncpu; uint32_t _main_tid;
                uint64_t _main_queue; uint64_t _init_mono_ns; uint64_t _init_realtime_ns;
                string _executable; string _command_line;
            };
        };

        """
    }

    /// Event times in ns since the process event, in merged order.
    /// Both streams record at every step (equal times: stream 0 first); stream 1's record
    /// of step 7 has an unknown type (counted, not delivered).
    var expectedTimes: [UInt64] {
        (0..<Self.records).flatMap { k in
            let time = UInt64(k + 1) * Self.step
            return k == 7 ? [time] : [time, time]
        }
    }

    func write(to directory: String, packetizedMetadata: Bool) throws {
        let text = Data(metadata.utf8)
        try (packetizedMetadata ? Self.packetize(text) : text).write(to: URL(fileURLWithPath: directory + "/metadata"))
        for stream in 0..<2 {
            try streamFile(stream).write(to: URL(fileURLWithPath: directory + "/stream_\(stream)"))
        }
    }

    private func streamFile(_ stream: Int) -> Data {
        var packets: [[(UInt64, (inout CTFBytes) -> Void)]] = [[], []]
        let tid = Int32(100 + stream)
        if stream == 0 {
            packets[0].append((Self.start, { $0.extendedHeader(id: 40, time: Self.start); $0.processPayload(tid: tid) }))
        }
        for k in 0..<Self.records {
            let time = Self.start + UInt64(k + 1) * Self.step
            let packet = k < Self.records / 2 ? 0 : 1
            let type: UInt8 = k == 7 && stream == 1 ? 250 : 20
            if k == 3 && stream == 0 {
                packets[packet].append((time, { $0.compactHeader(id: 1, time: time); $0.foreignPayload() }))
            }
            if k == 5 || k == 9, stream == 1 {
                let text: [UInt8] = k == 5 ? [0x6C, 0x61, 0x62, 0xFF, 0x6C] : [0x61, 0x62, 0x00, 0x63]
                packets[packet].append((time, { $0.compactHeader(id: 2, time: time); $0.stringPayload(tid: tid, text: text) }))
            } else {
                packets[packet].append((time, { $0.compactHeader(id: 0, time: time); $0.record1Payload(tid: tid, type: type, a: UInt64(k)) }))
            }
        }
        var file = Data()
        for (index, events) in packets.enumerated() {
            var bytes = CTFBytes()
            bytes.u32(0xC1FC_1FC1); bytes.raw(Self.uuid); bytes.u32(0); bytes.u64(UInt64(stream))
            bytes.u64(events.first!.0 - 1000); bytes.u64(events.last!.0)
            let contentAt = bytes.count
            bytes.u64(0); bytes.u64(0)
            bytes.u64(UInt64(index)); bytes.u64(stream == 0 && index == 1 ? 7 : 0); bytes.u32(UInt32(stream))
            for (_, event) in events { event(&bytes) }
            let content = bytes.count
            let packetSize = (content + 511) / 512 * 512
            bytes.patch64(at: contentAt, UInt64(content * 8))
            bytes.patch64(at: contentAt + 8, UInt64(packetSize * 8))
            bytes.pad(to: packetSize)
            file.append(contentsOf: bytes.data)
        }
        return file
    }

    /// LTTng's packetized metadata: the text in 256-byte packets with 37-byte headers.
    static func packetize(_ text: Data) -> Data {
        var out = Data()
        var offset = 0
        while offset < text.count {
            let chunk = text[(text.startIndex + offset)..<(text.startIndex + min(offset + 200, text.count))]
            var header = CTFBytes()
            header.u32(0x75D1_1D57); header.raw(uuid); header.u32(0)
            header.u32(UInt32((37 + chunk.count) * 8)); header.u32(256 * 8)
            header.raw([0, 0, 0, 1, 8])
            header.raw(Array(chunk))
            header.pad(to: 256)
            out.append(header.data)
            offset += chunk.count
        }
        return out
    }
}

/// Little-endian CTF bytes.
struct CTFBytes {
    var data = Data()
    var count: Int { data.count }
    mutating func raw(_ bytes: [UInt8]) { data.append(contentsOf: bytes) }
    mutating func align(_ bytes: Int) { while data.count % bytes != 0 { data.append(0) } }
    mutating func pad(to size: Int) { while data.count < size { data.append(0) } }
    mutating func u8(_ v: UInt8) { data.append(v) }
    mutating func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    mutating func patch64(at offset: Int, _ v: UInt64) {
        withUnsafeBytes(of: v.littleEndian) { data.replaceSubrange(offset..<offset + 8, with: $0) }
    }
    mutating func cString(_ s: String) { data.append(contentsOf: Array(s.utf8) + [0]) }

    /// 5-bit id and the low 27 bits of the time in one 32-bit word (TSDL alignments are in
    /// bits: the header's `align(8)` is a byte boundary).
    mutating func compactHeader(id: UInt32, time: UInt64) {
        u32(id | UInt32(truncatingIfNeeded: (time & ((1 << 27) - 1)) << 5))
    }

    /// id 31, then the 32-bit id and the full 64-bit time, byte-aligned.
    mutating func extendedHeader(id: UInt32, time: UInt64) {
        u8(31); u32(id); u64(time)
    }

    mutating func record1Payload(tid: Int32, type: UInt8, a: UInt64) {
        u32(UInt32(bitPattern: tid)); u8(type); u8(0); u32(7); u64(a)
    }

    mutating func stringPayload(tid: Int32, text: [UInt8]) {
        u32(UInt32(bitPattern: tid)); u8(11); u8(0); u32(1)
        u8(2); u64(0xABC); u64(0xDEF)
        u32(UInt32(text.count)); raw(text)
    }

    mutating func foreignPayload() {
        u32(100); cString("not ours"); align(2); u16(1); u16(2); u16(3)
    }

    mutating func processPayload(tid: Int32) {
        u32(UInt32(bitPattern: tid))                                       // vtid
        u32(UInt32(bitPattern: tid)); u32(1); u32(4); u32(UInt32(bitPattern: tid))
        u64(0x1234); u64(5_000_000_000); u64(1_700_000_000_000_000_000)
        cString("/bin/synthetic"); cString("synthetic --test")
    }
}
