// Symbols already resolved, per build-id: `<directory>/<build-id>.json`. A build-id names one exact
// file content, so its entries stay valid whatever the file's path, and even once it is deleted.
import Foundation

struct SymbolCache {
    let directory: URL

    private struct File: Codable {
        var version = 1
        var buildID: String
        /// Keyed by the offset in hex.
        var symbols: [String: SymbolInfo]
    }

    /// The cached symbols of a module, keyed by offset; empty when absent or unreadable (a corrupt
    /// file is then replaced by the next store).
    func load(buildID: String) -> [UInt64: SymbolInfo] {
        guard let url = url(for: buildID), let data = try? Data(contentsOf: url),
              let file = try? JSONDecoder().decode(File.self, from: data), file.version == 1, file.buildID == buildID
        else { return [:] }
        var symbols: [UInt64: SymbolInfo] = [:]
        for (key, var info) in file.symbols {
            guard let offset = UInt64(key, radix: 16) else { continue }
            // Short names are made again: their rules may have changed since the entry was written.
            if let function = info.function, info.linkageName != nil {
                info.shortName = ShortName.make(demangled: function, linkageName: info.linkageName)
            }
            symbols[offset] = info
        }
        return symbols
    }

    /// Adds `symbols` to the module's file, written to a temporary file and renamed over the old one
    /// so that a reader (or a crash) never sees half a file.
    func store(_ symbols: [UInt64: SymbolInfo], buildID: String) throws {
        guard !symbols.isEmpty, let url = url(for: buildID) else { return }
        var merged = load(buildID: buildID)
        merged.merge(symbols) { _, new in new }
        let file = File(buildID: buildID, symbols: Dictionary(uniqueKeysWithValues: merged.map { (String($0.key, radix: 16), $0.value) }))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(file)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let temporary = directory.appendingPathComponent(".\(buildID).\(UUID().uuidString).tmp")
        try data.write(to: temporary)
        if rename(temporary.path, url.path) != 0 {
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown)
        }
    }

    /// Only plain hex build-ids name files: a recorded string never escapes the directory.
    private func url(for buildID: String) -> URL? {
        guard !buildID.isEmpty, buildID.count <= 128, buildID.allSatisfy(\.isHexDigit) else { return nil }
        return directory.appendingPathComponent("\(buildID.lowercased()).json")
    }

    /// $XDG_CACHE_HOME/qtrace/symbols, else ~/.cache/qtrace/symbols.
    static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let base = environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? URL(fileURLWithPath: $0) : nil }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        return base.appendingPathComponent("qtrace/symbols", isDirectory: true)
    }
}
