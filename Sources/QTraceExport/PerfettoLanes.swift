// Lanes of the Perfetto export: spans that may overlap (a queue's running and pending items,
// a thread's intervals, blocked time and scheduler states) spread over tracks on which none
// overlap, since slices on one Perfetto track must nest.

/// Spans in lanes (none overlapping on a lane) and those that found no lane within the cap.
struct LaneAssignment: Equatable {
    var lanes: [[Int32]]
    /// In start order.
    var overflow: [Int32]
}

enum Lanes {
    /// Spans (sorted by start) in lanes: each goes to the first lane whose last span has
    /// ended by its start; spans that find none of `maxLanes` free are left out.
    static func assign(_ spans: [Int32], start: [Int64], end: [Int64], maxLanes: Int) -> [[Int32]] {
        place(spans, start: start, end: end, maxLanes: maxLanes).lanes
    }

    /// `assign`, also returning the spans left out. O(n log n): searching every lane for a
    /// free one was quadratic when spans never end (490,800 open intervals took 52.6 s). A
    /// lane is free once its last span ended by the current start, and stays free until it is
    /// given a span (starts only grow), so moving lanes from a heap by end time to a heap by
    /// index as their ends pass gives the same lowest free lane as the search did: the export
    /// is unchanged.
    static func place(_ spans: [Int32], start: [Int64], end: [Int64], maxLanes: Int) -> LaneAssignment {
        var result = LaneAssignment(lanes: [], overflow: [])
        var busy = LaneHeap()   // key: the end of the lane's last span
        var free = LaneHeap()   // key: the lane's index
        for row in spans {
            let i = Int(row)
            while let top = busy.min, top.key <= start[i] {
                busy.removeMin()
                free.insert(key: Int64(top.lane), lane: top.lane)
            }
            if let lane = free.min?.lane {
                free.removeMin()
                result.lanes[lane].append(row)
                busy.insert(key: end[i], lane: lane)
            } else if result.lanes.count < maxLanes {
                result.lanes.append([row])
                busy.insert(key: end[i], lane: result.lanes.count - 1)
            } else {
                result.overflow.append(row)
            }
        }
        return result
    }

    /// End times for spans (sorted by start) sharing one track: each ends at its own end or,
    /// if sooner, where the next one starts, so that none overlap (slices on a Perfetto track
    /// must nest, and nesting spans that never end would stack them as deep as they are many).
    /// Parallel to `spans`.
    static func cutEnds(_ spans: [Int32], start: [Int64], end: [Int64]) -> [Int64] {
        spans.indices.map { k in
            let i = Int(spans[k])
            let next = k + 1 < spans.count ? start[Int(spans[k + 1])] : .max
            return max(start[i], min(end[i], next))
        }
    }
}

/// A binary min-heap of (key, lane), ties broken by lane: written out because the standard
/// library has none, and a generic one would be unspecialized across modules.
struct LaneHeap {
    private var keys: [Int64] = []
    private var lanes: [Int] = []

    var min: (key: Int64, lane: Int)? { keys.isEmpty ? nil : (keys[0], lanes[0]) }

    mutating func insert(key: Int64, lane: Int) {
        keys.append(key)
        lanes.append(lane)
        var child = keys.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(child, parent) else { break }
            swapAt(child, parent)
            child = parent
        }
    }

    mutating func removeMin() {
        let last = keys.count - 1
        swapAt(0, last)
        keys.removeLast()
        lanes.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < keys.count, less(left, smallest) { smallest = left }
            if right < keys.count, less(right, smallest) { smallest = right }
            guard smallest != parent else { return }
            swapAt(parent, smallest)
            parent = smallest
        }
    }

    private func less(_ a: Int, _ b: Int) -> Bool {
        keys[a] != keys[b] ? keys[a] < keys[b] : lanes[a] < lanes[b]
    }

    private mutating func swapAt(_ a: Int, _ b: Int) {
        keys.swapAt(a, b)
        lanes.swapAt(a, b)
    }
}
