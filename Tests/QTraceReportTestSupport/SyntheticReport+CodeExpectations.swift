// What a browser test should find of code identity in the report of a synthetic input: the
// codes and their item counts, an item with a chain of enqueuing items, search counts, tasks.
import QTraceViewModel
import Foundation

extension SyntheticReport {
    /// Texts the browser tests type into the search box (none matches an annotation).
    static let searchTexts = ["loader.load", "LOADER", "com.example.db", "no such code"]

    static func codeExpectations(_ input: ReportInput) -> [String: Any] {
        let items = input.items
        guard !input.sites.isEmpty, items.site.count == items.count else { return ["codes": [], "tasks": 0] }
        func code(ofItem i: Int) -> Int {
            let s = Int(items.site[i])
            return s >= 0 ? input.sites[s].code : -1
        }
        var perCode = [Int](repeating: 0, count: input.codes.count)
        var perSite = [Int](repeating: 0, count: input.sites.count)
        for i in 0..<items.count where items.site[i] >= 0 {
            perSite[Int(items.site[i])] += 1
            if code(ofItem: i) >= 0 { perCode[code(ofItem: i)] += 1 }
        }
        var out: [String: Any] = [
            "codes": input.codes.map { ["name": $0.what.name, "symbol": $0.what.symbol, "file": $0.what.file, "line": $0.what.line] },
            "codeItems": perCode,
            "siteItems": perSite,
            "sites": input.sites.map { ["code": $0.code, "from": $0.from.map { $0.name as Any } ?? NSNull()] },
            "siteBlocked": input.sites.indices.map { s in input.blocked.filter { $0.site == s }.count },
            "tasks": input.tasks.count,
            "taskJobs": input.tasks.map(\.jobs.count),
            "childTasks": input.tasks.filter { $0.parent >= 0 }.count,
            "search": Dictionary(uniqueKeysWithValues: searchTexts.map { ($0, searchCount(input, $0)) }),
        ]
        // The item with the longest chain of enqueuing items that all have a site (up to 3).
        var best = -1, bestDepth = 0
        for i in 0..<items.count where code(ofItem: i) >= 0 && input.sites[Int(items.site[i])].from != nil {
            var depth = 0, p = Int(items.parent[i])
            while p >= 0, depth < 3, code(ofItem: p) >= 0 {
                depth += 1
                p = Int(items.parent[p])
            }
            if depth > bestDepth { (best, bestDepth) = (i, depth) }
            if bestDepth == 3 { break }
        }
        if best >= 0 {
            let site = input.sites[Int(items.site[best])]
            let parent = Int(items.parent[best])
            out["chainItem"] = best
            out["chainDepth"] = bestDepth
            out["chainWhatRan"] = input.codes[site.code].what.name
            out["chainWhatRanWhere"] = fileLine(input.codes[site.code].what)
            out["chainEnqueuedAt"] = site.from?.name ?? ""
            out["chainEnqueuedAtWhere"] = site.from.map(fileLine) ?? ""
            out["chainParent"] = parent
            out["chainParentCode"] = input.codes[code(ofItem: parent)].what.name
        }
        return out
    }

    static func fileLine(_ l: ReportCodeLocation) -> String {
        l.file.isEmpty || l.line <= 0 ? "" : "\(l.file.split(separator: "/").last ?? ""):\(l.line)"
    }

    /// Items whose code (short or full symbol) or queue label contains `text`, ignoring case:
    /// the viewer's search, for texts that match no annotation interval.
    static func searchCount(_ input: ReportInput, _ text: String) -> Int {
        let needle = text.lowercased()
        precondition(!input.annotations.intervals.contains { $0.name.lowercased().contains(needle) })
        let siteMatches = input.sites.map { site -> Bool in
            guard let code = input.codes[safe: site.code] else { return false }
            return code.what.name.lowercased().contains(needle) || code.what.symbol.lowercased().contains(needle)
        }
        let queueMatches = input.queues.map { $0.label.lowercased().contains(needle) }
        let items = input.items
        return (0..<items.count).filter { i in
            let s = Int(items.site[i])
            return (s >= 0 && siteMatches[s]) || queueMatches[Int(items.queue[i])]
        }.count
    }
}

extension Array {
    /// The element at `index`, nil when out of range or nil (QTraceReport's own is internal).
    subscript(safe index: Int?) -> Element? {
        guard let index, indices.contains(index) else { return nil }
        return self[index]
    }
}
