// Levels of detail, computed when the report is written so that the browser never draws
// more boxes than there are pixels. For each box track (the running items of a thread lane,
// the running or pending items of a queue lane, blocked intervals, source handler runs) and
// each level, time is cut into buckets of `topBucketNs >> (2 * level)` ns; each bucket of
// each row becomes one summary: how much of it is covered (0...255) and by which colour
// (queue, or block cause) most. Runs of equal buckets are merged, so one long item costs one
// entry at every level. A track gets finer levels only while they are at most a quarter as many
// entries as it has boxes: below that the viewer draws the boxes themselves.
import QTraceViewModel

/// The boxes of one track by index, in the order the track lists them (by begin or by end):
/// `TrackBoxes`, or a lane's rows of the item layout read in place (`LaneBoxes`).
protocol TrackBoxSource {
    var count: Int { get }
    func box(_ i: Int) -> (begin: Int64, end: Int64, row: UInt8, color: Int32)
}

/// A track's boxes, as columns.
struct TrackBoxes: TrackBoxSource {
    var begin: [Int64] = []
    var end: [Int64] = []
    var row: [UInt8] = []
    var color: [Int32] = []

    mutating func append(begin b: Int64, end e: Int64, row r: UInt8, color c: Int32) {
        begin.append(b)
        end.append(e)
        row.append(r)
        color.append(c)
    }

    var count: Int { begin.count }

    func box(_ i: Int) -> (begin: Int64, end: Int64, row: UInt8, color: Int32) { (begin[i], end[i], row[i], color[i]) }
}

struct TrackInfo {
    /// "threadRun", "threadBlocked", "threadSched", "queueRun", "queuePending", "sourceRun".
    var kind: String
    var object: Int
    var levels: Int
}

struct LevelsOfDetail {
    /// Tracks with fewer boxes are always drawn box by box.
    static let minimumBoxes = 4096
    static let minimumBucketNs: Int64 = 64
    static let maximumLevels = 16

    let topBucketNs: Int64
    private(set) var tracks: [TrackInfo] = []
    // The entries, as columns (sorted by track, level, row, bucket), each in the narrowest
    // type its values have (27 bytes an entry rather than 7 Int64s: millions of entries on a
    // 20M-item trace).
    private(set) var track: [Int32] = []
    private(set) var level: [UInt8] = []
    private(set) var row: [UInt8] = []
    private(set) var bucket: [Int64] = []
    private(set) var length: [Int64] = []
    private(set) var coverage: [UInt8] = []
    private(set) var color: [Int32] = []

    /// Buckets of the top level are about 1/1024 of the trace (a power of two of ns).
    init(traceDurationNs: Int64) {
        var top = LevelsOfDetail.minimumBucketNs
        while top < traceDurationNs / 1024 { top <<= 1 }
        topBucketNs = top
    }

    mutating func addTrack(kind: String, object: Int, boxes: some TrackBoxSource) {
        let id = Int32(tracks.count)
        var levels = 0
        if boxes.count >= LevelsOfDetail.minimumBoxes {
            var bucketNs = topBucketNs
            while levels < LevelsOfDetail.maximumLevels, bucketNs >= LevelsOfDetail.minimumBucketNs {
                // A level of more than a quarter as many entries as boxes is worth nothing.
                guard let rows = LevelsOfDetail.summarize(boxes, bucketNs: bucketNs, maxRuns: boxes.count / 4) else { break }
                for runs in rows { append(runs, track: id, level: UInt8(levels)) }
                levels += 1
                bucketNs >>= 2
            }
        }
        // Tracks without levels are left out: the viewer draws their boxes.
        if levels > 0 { tracks.append(TrackInfo(kind: kind, object: object, levels: levels)) }
    }

    private mutating func append(_ runs: [SummaryRun], track id: Int32, level l: UInt8) {
        for run in runs {
            track.append(id)
            level.append(l)
            row.append(run.row)
            bucket.append(run.bucket)
            length.append(run.length)
            coverage.append(run.coverage)
            color.append(run.color)
        }
    }

    struct SummaryRun {
        var row: UInt8
        var bucket: Int64
        var length: Int64
        var coverage: UInt8
        var color: Int32
    }

    /// The summaries of one level, grouped by row (one array per row used, not concatenated:
    /// a copy of them all would double a busy lane's), each row in bucket order; nil as soon
    /// as there are more than `maxRuns` (the level that fails is not built whole: on a thread
    /// lane of 10M boxes it was as many runs of 32 bytes).
    static func summarize(_ boxes: some TrackBoxSource, bucketNs: Int64, maxRuns: Int = .max) -> [[SummaryRun]]? {
        var rows = [RowSummarizer](repeating: RowSummarizer(), count: 256)
        var used = [Bool](repeating: false, count: 256)
        var runs = 0 // never decreases: runs only merge into the last one or are appended
        for i in 0..<boxes.count {
            let box = boxes.box(i)
            let r = Int(box.row)
            used[r] = true
            let before = rows[r].runs.count
            rows[r].add(begin: box.begin, end: box.end, color: box.color, bucketNs: bucketNs, row: box.row)
            runs += rows[r].runs.count - before
            if runs > maxRuns { return nil }
        }
        var out: [[SummaryRun]] = []
        for r in 0..<256 where used[r] {
            rows[r].flush(bucketNs: bucketNs, row: UInt8(r))
            out.append(rows[r].runs)
            rows[r].runs = []
        }
        return out.reduce(0, { $0 + $1.count }) > maxRuns ? nil : out
    }

    /// Accumulates one row's boxes into bucket summaries.
    struct RowSummarizer {
        var runs: [SummaryRun] = []
        /// Boxes that overlap earlier ones in the row (shared overflow rows) are clipped here.
        var cursor: Int64 = .min
        var currentBucket: Int64 = -1
        var coveredNs: Int64 = 0
        var dominantColor: Int32 = 0
        var dominantNs: Int64 = -1

        mutating func add(begin: Int64, end: Int64, color: Int32, bucketNs: Int64, row: UInt8) {
            let b = max(begin, cursor)
            guard end > b else { return }
            cursor = end
            let first = b / bucketNs
            let last = (end - 1) / bucketNs
            if first == last {
                addPartial(bucket: first, ns: end - b, color: color, bucketNs: bucketNs, row: row)
                return
            }
            addPartial(bucket: first, ns: (first + 1) * bucketNs - b, color: color, bucketNs: bucketNs, row: row)
            if last - first > 1 {
                flush(bucketNs: bucketNs, row: row)
                emit(SummaryRun(row: row, bucket: first + 1, length: last - first - 1, coverage: 255, color: color))
            }
            addPartial(bucket: last, ns: end - last * bucketNs, color: color, bucketNs: bucketNs, row: row)
        }

        mutating func addPartial(bucket: Int64, ns: Int64, color: Int32, bucketNs: Int64, row: UInt8) {
            if bucket != currentBucket {
                flush(bucketNs: bucketNs, row: row)
                currentBucket = bucket
            }
            coveredNs += ns
            if ns > dominantNs {
                dominantNs = ns
                dominantColor = color
            }
        }

        mutating func flush(bucketNs: Int64, row: UInt8) {
            guard currentBucket >= 0 else { return }
            // 16 shades are plenty for the eye and let neighbouring buckets merge into runs: the
            // covered fifteenths, rounded up. In integers, by a shift for the power-of-two buckets
            // the writer uses: exact, as the doubles were there, without libm's `ceil` per bucket.
            let covered = min(coveredNs, bucketNs) * 15 + bucketNs - 1
            let fifteenths = bucketNs & (bucketNs - 1) == 0
                ? covered >> Int64(bucketNs.trailingZeroBitCount) : covered / bucketNs
            let coverage = UInt8(max(1, min(15, fifteenths)) * 17)
            emit(SummaryRun(row: row, bucket: currentBucket, length: 1, coverage: coverage, color: dominantColor))
            currentBucket = -1
            coveredNs = 0
            dominantNs = -1
        }

        mutating func emit(_ run: SummaryRun) {
            if var lastRun = runs.last, lastRun.bucket + lastRun.length == run.bucket,
               lastRun.coverage == run.coverage, lastRun.color == run.color
            {
                lastRun.length += run.length
                runs[runs.count - 1] = lastRun
            } else {
                runs.append(run)
            }
        }
    }

    func write(to payload: inout PayloadBuilder) {
        payload.beginTable("lod", rows: track.count)
        payload.column("track", .delta, as: .i32, track.lazy.map(Int64.init))
        payload.column("level", .u8, as: .u8, level.lazy.map(Int64.init))
        payload.column("row", .u8, as: .u8, row.lazy.map(Int64.init))
        payload.column("bucket", .deltaPlanes, as: .f64, bucket)
        payload.column("length", .uvarint, as: .f64, length)
        payload.column("coverage", .u8, as: .u8, coverage.lazy.map(Int64.init))
        payload.column("color", .svarint, as: .i32, color.lazy.map(Int64.init))
    }

    var headerJSON: JSONValue {
        .object([
            ("topBucketNs", .int(topBucketNs)),
            ("levelFactor", .int(4)),
            ("tracks", .array(tracks.map { t in
                .object([("kind", .string(t.kind)), ("object", .int(t.object)), ("levels", .int(t.levels))])
            })),
        ])
    }
}
