// Queues: the pictures the GCD talks draw with queues (dispatch-domain.md, "The pictures users
// know"). Each scenario prints only facts that hold on every run.
@preconcurrency import Dispatch  // Linux Dispatch sources are not yet marked Sendable
import Foundation

// MARK: - main-to-serial (picture 1)

struct Photo: Sendable {
    let name: String
    let width: Int
    let height: Int
}

/// Stands in for "download and decode an image": blocks like a network round trip, then derives
/// a size from the name so the output is the same on every run.
func downloadPhoto(named name: String) -> Photo {
    simulateBlockingIO(milliseconds: 40)
    let hash = fnv1a(name)
    return Photo(name: name, width: 320 + Int(hash % 7) * 160, height: 240 + Int((hash >> 8) % 5) * 120)
}

/// The image-fetch example: a main-queue item hands each download to a private serial queue, an
/// automatic worker thread runs them one after another, and each result hops back to the main
/// queue to be "displayed". Uses RunLoop.main.run() so that main-queue items run on the main
/// thread (with dispatchMain() on Linux they run on a worker thread instead).
func runMainToSerial() -> Never {
    let fetchQueue = DispatchQueue(label: "com.example.gallery.fetch")
    let names = (1...6).map { "photo-\($0).jpg" }
    let displayed = Locked(0)

    DispatchQueue.main.async {  // like viewDidLoad: runs on the main thread, must not block
        for name in names {
            fetchQueue.async {
                let photo = downloadPhoto(named: name)
                DispatchQueue.main.async {
                    print("displayed \(photo.name) (\(photo.width)x\(photo.height))")
                    if displayed.add() == names.count {
                        print("all \(names.count) photos displayed")
                        exit(0)
                    }
                }
            }
        }
    }
    RunLoop.main.run()
    fatalError("the main run loop returned")
}

// MARK: - global-fanout (picture 2)

/// Six items enqueued in order A..F on a global queue, each with a different amount of work:
/// they run on several worker threads and finish out of order. stdout lists what is fixed
/// (enqueue order, per-item work); the actual completion order goes to stderr.
func runGlobalFanout() {
    let items: [(name: String, milliseconds: Double)] =
        [("A", 120), ("B", 60), ("C", 20), ("D", 90), ("E", 10), ("F", 40)]
    let global = DispatchQueue.global()
    let allDone = DispatchGroup()
    let completionOrder = Locked<[String]>([])

    print("enqueued in order: " + items.map(\.name).joined(separator: " "))
    for item in items {
        global.async(group: allDone) {
            burnCPU(milliseconds: item.milliseconds)
            completionOrder.append(item.name)
        }
    }
    allDone.wait()

    for item in items {
        print("\(item.name): \(Int(item.milliseconds)) ms of work, done")
    }
    print("completed \(completionOrder.current.count) of \(items.count) items")
    note("completion order (varies): \(completionOrder.current.joined(separator: " "))")
}

// MARK: - serial-cache (picture 3)

/// Thumbnail sizes keyed by file name. A private serial queue is the lock: lookups are `sync`
/// (the caller needs the answer), stores are `async` (the caller does not wait).
final class ThumbnailCache: @unchecked Sendable {  // `sizes` is only touched on `queue`
    private let queue = DispatchQueue(label: "com.example.thumbnail-cache")
    private var sizes: [String: Int] = [:]

    func size(for key: String) -> Int? { queue.sync { sizes[key] } }
    func store(_ size: Int, for key: String) { queue.async { self.sizes[key] = size } }
    func snapshot() -> [String: Int] { queue.sync { sizes } }
}

/// "Renders" a thumbnail: a little CPU work and a size that depends only on the key.
func renderThumbnail(for key: String) -> Int {
    burnCPU(milliseconds: 0.5)
    return 1000 + Int(fnv1a(key) % 9000)
}

/// Four plain threads (not Dispatch workers) share one cache. Their requests are enqueued on
/// the serial queue in no particular order and run back to back, one at a time.
func runSerialCache() {
    let cache = ThumbnailCache()
    let keys = (0..<12).map { "img-\($0).png" }
    let threadCount = 4, lookupsPerThread = 30
    let misses = Locked(0)
    let feeders = DispatchGroup()

    for threadIndex in 0..<threadCount {
        feeders.enter()
        let feeder = Thread {
            for lookup in 0..<lookupsPerThread {
                let key = keys[(threadIndex * 5 + lookup * 7) % keys.count]
                if cache.size(for: key) == nil {
                    misses.add()
                    cache.store(renderThumbnail(for: key), for: key)
                }
            }
            feeders.leave()
        }
        feeder.name = "feeder-\(threadIndex + 1)"
        feeder.start()
    }
    feeders.wait()

    let sizes = cache.snapshot()  // queued behind every pending store
    print("lookups: \(threadCount * lookupsPerThread) from \(threadCount) threads")
    print("cached thumbnails: \(sizes.count)")
    for key in sizes.keys.sorted() {
        print("  \(key): \(sizes[key]!) bytes")
    }
    note("cache misses (varies with interleaving): \(misses.current)")
}

// MARK: - readers-writer (picture 9)

/// Settings read often from many threads and written rarely. Reads are `sync` on a private
/// concurrent queue, so they run side by side; writes are barriers, so each one waits for the
/// reads already running and then runs alone.
final class SettingsStore: @unchecked Sendable {  // `values` is only touched on `queue`
    private let queue = DispatchQueue(label: "com.example.settings", attributes: .concurrent)
    private var values: [String: String]
    /// Bookkeeping that checks the barrier promise: both counters must stay 0.
    let readers = ConcurrencyGauge()
    private let writeInProgress = Locked(false)
    let readsThatSawAWrite = Locked(0)
    let writesThatSawAReader = Locked(0)

    init(_ initial: [String: String]) { values = initial }

    func value(for key: String) -> String? {
        queue.sync {
            readers.measure {
                if writeInProgress.current { readsThatSawAWrite.add() }
                burnCPU(milliseconds: 1)  // e.g. parsing the stored value
                return values[key]
            }
        }
    }

    func setValue(_ value: String, for key: String) {
        queue.async(flags: .barrier) {
            self.exclusively { self.values[key] = value }
        }
    }

    /// The same kind of write, packaged as a work item (to hand around, or cancel, before use).
    func makeMergeItem(_ changes: [String: String]) -> DispatchWorkItem {
        DispatchWorkItem(flags: .barrier) {
            self.exclusively { self.values.merge(changes) { _, new in new } }
        }
    }

    func submit(_ item: DispatchWorkItem) { queue.async(execute: item) }

    func snapshot() -> [String: String] { queue.sync { values } }

    private func exclusively(_ write: () -> Void) {
        if readers.running > 0 { writesThatSawAReader.add() }
        writeInProgress.set(true)
        burnCPU(milliseconds: 3)
        write()
        writeInProgress.set(false)
    }
}

func runReadersWriter() {
    let store = SettingsStore(["theme": "light", "fontSize": "12", "language": "en"])
    let keys = ["theme", "fontSize", "language"]
    let readerCount = 4, readsPerReader = 25
    let readers = DispatchGroup()

    // The readers are plain threads (say, request handlers). Had they been items on a global
    // queue, a sync read waiting behind a barrier would park a worker, and with every worker
    // parked the barrier itself would wait for a thread: on Linux libdispatch only adds one
    // after its once-a-second monitor notices the stall.
    for reader in 0..<readerCount {
        readers.enter()
        let thread = Thread {
            for read in 0..<readsPerReader {
                _ = store.value(for: keys[(reader + read) % keys.count])
            }
            readers.leave()
        }
        thread.name = "reader-\(reader + 1)"
        thread.start()
    }
    // The writes arrive while the readers are busy (about 50 ms of reading in all), so a
    // barrier that did not hold the reads back would show up in the two counters below.
    store.setValue("dark", for: "theme")
    simulateBlockingIO(milliseconds: 5)
    store.setValue("14", for: "fontSize")
    simulateBlockingIO(milliseconds: 5)
    store.submit(store.makeMergeItem(["language": "fr", "region": "FR"]))
    simulateBlockingIO(milliseconds: 5)
    store.setValue("16", for: "fontSize")
    readers.wait()

    let settings = store.snapshot()  // a sync read: waits for every barrier queued before it
    print("reads: \(readerCount * readsPerReader) (sync, concurrent), writes: 4 (3 barrier async + 1 barrier work item)")
    print("reads that overlapped a write: \(store.readsThatSawAWrite.current)")
    print("writes that overlapped a read: \(store.writesThatSawAReader.current)")
    print("final settings: " + settings.keys.sorted().map { "\($0)=\(settings[$0]!)" }.joined(separator: " "))
    note("most reads running at once (varies): \(store.readers.peak)")
}

// MARK: - target-funnel (picture 7)

/// Two queues and a timer source all target one serial queue (think: one database
/// connection). Whatever their own kind, their items now run one at a time.
func runTargetFunnel() {
    let funnel = DispatchQueue(label: "com.example.funnel")
    // A serial queue given its target at creation.
    let network = DispatchQueue(label: "com.example.funnel.network", target: funnel)
    // A concurrent queue retargeted before it is activated: under a serial target it is serial.
    let decode = DispatchQueue(label: "com.example.funnel.decode", attributes: [.concurrent, .initiallyInactive])
    decode.setTarget(queue: funnel)
    decode.activate()
    // A timer source, retargeted the same way before it is activated.
    let ticker = DispatchSource.makeTimerSource()
    (ticker as! DispatchObject).setTarget(queue: funnel)

    let gauge = ConcurrencyGauge()
    let counts = Locked([String: Int]())
    let allDone = DispatchGroup()
    @Sendable func work(_ kind: String) {
        gauge.measure { burnCPU(milliseconds: 5) }
        counts.withLock { $0[kind, default: 0] += 1 }
    }

    for _ in 0..<5 {
        network.async(group: allDone) { work("network") }
        decode.async(group: allDone) { work("decode") }
    }
    let tickLimit = 5
    allDone.enter()
    ticker.setEventHandler {
        guard !ticker.isCancelled else { return }
        work("timer")
        if counts.current["timer"] == tickLimit { ticker.cancel() }
    }
    ticker.setCancelHandler { allDone.leave() }
    ticker.schedule(deadline: .now(), repeating: .milliseconds(10))
    ticker.activate()
    allDone.wait()

    let total = counts.current
    print("network items: \(total["network"] ?? 0), decode items: \(total["decode"] ?? 0), timer ticks: \(total["timer"] ?? 0)")
    print("most items running at once under com.example.funnel: \(gauge.peak)")
}

// MARK: - jump-queue (picture 10)

/// Batch work reaches the indexer's serial queue through a low-priority queue. An urgent
/// request jumps ahead: suspend the low-priority queue (the running batch item finishes, the
/// rest wait), put the urgent item directly on the target queue, and resume when it is done.
func runJumpQueue() {
    let indexer = DispatchQueue(label: "com.example.indexer")
    let batch = DispatchQueue(label: "com.example.indexer.batch", qos: .background, target: indexer)
    let order = Locked<[String]>([])
    let firstBatchItemStarted = DispatchSemaphore(value: 0)
    let allDone = DispatchGroup()

    for index in 1...5 {
        batch.async(group: allDone) {
            if index == 1 { firstBatchItemStarted.signal() }
            burnCPU(milliseconds: 30)
            order.append("batch-\(index)")
        }
    }
    firstBatchItemStarted.wait()  // batch-1 is running: the urgent request arrives now

    batch.suspend()  // does not interrupt batch-1; batch-2... stay queued
    indexer.async(group: allDone) {
        burnCPU(milliseconds: 10)
        order.append("urgent")
        batch.resume()
    }
    allDone.wait()

    print("completion order: " + order.current.joined(separator: " "))
}

// MARK: - group-fanout (picture 11)

/// Part 1: render 8 pages with async(group:) and let notify collect the results. Part 2:
/// a callback-style API (async(group:) cannot see when its callback runs) bracketed with
/// enter/leave. Runs the main queue with dispatchMain(), like a server would.
func runGroupFanout() -> Never {
    let renders = DispatchGroup()
    let checksums = Locked([Int: UInt64]())
    let renderQueue = DispatchQueue.global(qos: .utility)

    for page in 1...8 {
        renderQueue.async(group: renders) {
            burnCPU(milliseconds: Double(5 + 3 * page))
            checksums.withLock { $0[page] = fnv1a("page-\(page)") }
        }
    }
    renders.notify(queue: .main) {
        let pages = checksums.current
        print("rendered \(pages.count) pages")
        for page in pages.keys.sorted() {
            print("  page \(page): \(hex(pages[page]!))")
        }
        fetchProfilesWithEnterLeave()
    }
    dispatchMain()
}

/// A client in callback style, like a network library: `fetchProfile` returns at once and
/// calls `completion` later, on the client's own queue.
final class ProfileClient: Sendable {
    private let callbackQueue = DispatchQueue(label: "com.example.profile-client")

    func fetchProfile(id: Int, completion: @escaping @Sendable (String) -> Void) {
        let latency = DispatchTimeInterval.milliseconds(10 + (id * 37) % 50)
        callbackQueue.asyncAfter(deadline: .now() + latency) {
            completion("user-\(id)")
        }
    }
}

func fetchProfilesWithEnterLeave() {
    let client = ProfileClient()
    let fetches = DispatchGroup()
    let names = Locked<[String]>([])

    for id in 1...6 {
        fetches.enter()  // before the call: the group must not look empty in between
        client.fetchProfile(id: id) { name in
            names.append(name)
            fetches.leave()
        }
    }
    fetches.notify(queue: .main) {
        print("fetched \(names.current.count) profiles: " + names.current.sorted().joined(separator: " "))
        exit(0)
    }
}
