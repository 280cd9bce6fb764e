// The GNU build-id of an ELF64 little-endian file, read from its note segments (or note sections).
// Every read is bounds-checked: a truncated, corrupt or non-ELF file yields nil, never a crash.
import Foundation

enum ELFBuildID {
    private static let noteTypeBuildID: UInt32 = 3  // NT_GNU_BUILD_ID
    private static let programNoteType: UInt32 = 4  // PT_NOTE
    private static let sectionNoteType: UInt32 = 7  // SHT_NOTE
    /// Headers and notes are small; refuse to read more than this from any table or note.
    private static let maxChunk = 1 << 20

    /// The build-id as lowercase hex, or nil when the file is unreadable, not ELF64 LE, or has none.
    static func read(path: String) -> String? {
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        let reader = ChunkReader(file: file)
        guard let header = reader.read(at: 0, count: 64), isELF64LittleEndian(header) else { return nil }
        return fromProgramHeaders(header, reader) ?? fromSectionHeaders(header, reader)
    }

    private static func isELF64LittleEndian(_ header: [UInt8]) -> Bool {
        header.count >= 64 && header[0] == 0x7F && header[1] == 0x45 && header[2] == 0x4C && header[3] == 0x46
            && header[4] == 2 && header[5] == 1
    }

    /// PT_NOTE segments: what the loader maps, so what dl_iterate_phdr showed the recorder.
    private static func fromProgramHeaders(_ header: [UInt8], _ reader: ChunkReader) -> String? {
        guard let table = reader.table(header, offsetAt: 0x20, entrySizeAt: 0x36, countAt: 0x38, minEntry: 56)
        else { return nil }
        for entry in table.entries where entry.u32(0) == programNoteType {
            guard let offset = entry.u64(8), let size = entry.u64(32) else { continue }
            let align = entry.u64(48) == 8 ? 8 : 4
            if let id = buildID(inNotesAt: offset, size: size, align: align, reader) { return id }
        }
        return nil
    }

    /// SHT_NOTE sections: for files whose program headers lack the note (e.g. separate debug files).
    private static func fromSectionHeaders(_ header: [UInt8], _ reader: ChunkReader) -> String? {
        guard let table = reader.table(header, offsetAt: 0x28, entrySizeAt: 0x3A, countAt: 0x3C, minEntry: 64)
        else { return nil }
        for entry in table.entries where entry.u32(4) == sectionNoteType {
            guard let offset = entry.u64(24), let size = entry.u64(32) else { continue }
            let align = entry.u64(48) == 8 ? 8 : 4
            if let id = buildID(inNotesAt: offset, size: size, align: align, reader) { return id }
        }
        return nil
    }

    /// Walks the notes (namesz, descsz, type, name, desc; name and desc padded to `align`).
    private static func buildID(inNotesAt offset: UInt64, size: UInt64, align: Int, _ reader: ChunkReader) -> String? {
        guard size <= UInt64(maxChunk), let notes = reader.read(at: offset, count: Int(size)) else { return nil }
        let bytes = ByteView(bytes: notes, base: 0)
        var cursor = 0
        while cursor + 12 <= notes.count {
            guard let nameSize = bytes.u32(cursor), let descSize = bytes.u32(cursor + 4), let type = bytes.u32(cursor + 8)
            else { return nil }
            let nameStart = cursor + 12
            let descStart = nameStart + padded(Int(nameSize), align)
            let next = descStart + padded(Int(descSize), align)
            guard descStart + Int(descSize) <= notes.count else { return nil }
            let name = notes[nameStart..<nameStart + Int(nameSize)]
            if type == noteTypeBuildID, Array(name.prefix(3)) == Array("GNU".utf8), descSize > 0 {
                return notes[descStart..<descStart + Int(descSize)].map { String(format: "%02x", $0) }.joined()
            }
            guard next > cursor else { return nil }
            cursor = next
        }
        return nil
    }

    private static func padded(_ size: Int, _ align: Int) -> Int { (size + align - 1) / align * align }
}

/// Reads byte ranges of a file, refusing ranges beyond its end or larger than a chunk.
private struct ChunkReader {
    let file: FileHandle

    func read(at offset: UInt64, count: Int) -> [UInt8]? {
        guard count >= 0, count <= (1 << 20), offset <= UInt64(Int64.max) else { return nil }
        do {
            try file.seek(toOffset: offset)
            guard let data = try file.read(upToCount: count), data.count == count else { return nil }
            return [UInt8](data)
        } catch {
            return nil
        }
    }

    /// A header table (program or section headers) described by the ELF header's fields.
    func table(_ header: [UInt8], offsetAt: Int, entrySizeAt: Int, countAt: Int, minEntry: Int) -> Table? {
        let fields = ByteView(bytes: header, base: 0)
        guard let offset = fields.u64(offsetAt), let entrySize = fields.u16(entrySizeAt), let count = fields.u16(countAt),
              offset > 0, count > 0, Int(entrySize) >= minEntry,
              let bytes = read(at: offset, count: Int(entrySize) * Int(count))
        else { return nil }
        return Table(bytes: bytes, entrySize: Int(entrySize), count: Int(count))
    }

    struct Table {
        let bytes: [UInt8]
        let entrySize: Int
        let count: Int
        var entries: [ByteView] { (0..<count).map { ByteView(bytes: bytes, base: $0 * entrySize) } }
    }
}

/// Little-endian integers at offsets relative to `base`, nil when out of bounds.
private struct ByteView {
    let bytes: [UInt8]
    let base: Int

    func u16(_ at: Int) -> UInt16? { integer(at, width: 2).map { UInt16($0) } }
    func u32(_ at: Int) -> UInt32? { integer(at, width: 4).map { UInt32($0) } }
    func u64(_ at: Int) -> UInt64? { integer(at, width: 8) }

    private func integer(_ at: Int, width: Int) -> UInt64? {
        let start = base + at
        guard at >= 0, start + width <= bytes.count else { return nil }
        var value: UInt64 = 0
        for index in (start..<start + width).reversed() { value = value << 8 | UInt64(bytes[index]) }
        return value
    }
}
