// Whole programs: a busy "app" that mixes several scenarios at once, and a clean control
// program that should produce no findings at all.
@preconcurrency import Dispatch  // Linux Dispatch sources are not yet marked Sendable
import Foundation

// MARK: - app

/// Everything the app did, printed once at the end (counts only, so stdout never varies).
final class AppActivity: Sendable {
    let photosShown = Locked(0)
    let cacheLookups = Locked(0)
    let feedChecksums = Locked([Int: UInt64]())
    let heartbeats = Locked(0)
    let statusUpdates = Locked(0)
    let primes = Locked(0)
    let prefetched = Locked(0)
}

/// A mixed app running for about 2 seconds: a photo gallery (private serial queue, results
/// back to main), a thumbnail cache fed from a concurrentPerform, a feed refresh with a group,
/// a heartbeat timer that updates the main thread, analytics with concurrentPerform, and a few
/// prefetches on a global queue. The main queue runs on the main thread (RunLoop.main.run()).
func runApp() -> Never {
    let activity = AppActivity()
    let everything = DispatchGroup()

    DispatchQueue.main.async {  // applicationDidFinishLaunching
        startGallery(activity, everything)
        startCacheTraffic(activity, everything)
        startFeedRefresh(activity, everything)
        startHeartbeat(activity, everything)
        startAnalytics(activity, everything)
        startPrefetch(activity, everything)

        everything.notify(queue: .main) {
            let feed = activity.feedChecksums.current
            let feedDigest = fnv1a(feed.keys.sorted().map { hex(feed[$0]!) }.joined())
            print("photos shown: \(activity.photosShown.current)")
            print("cache lookups: \(activity.cacheLookups.current)")
            print("feed stories: \(feed.count), digest \(hex(feedDigest))")
            print("heartbeats: \(activity.heartbeats.current), status bar updates: \(activity.statusUpdates.current)")
            print("analytics: \(activity.primes.current) primes below 60000")
            print("prefetched: \(activity.prefetched.current)")
            exit(0)
        }
    }
    RunLoop.main.run()
    fatalError("the main run loop returned")
}

/// Ten photos downloaded one after another on a private serial queue, each shown on main.
private func startGallery(_ activity: AppActivity, _ everything: DispatchGroup) {
    let fetchQueue = DispatchQueue(label: "com.example.app.gallery")
    for index in 1...10 {
        everything.enter()
        fetchQueue.async {
            let photo = downloadPhoto(named: "album-\(index).jpg")
            DispatchQueue.main.async {
                blackHole(photo)  // "display" it
                activity.photosShown.add()
                everything.leave()
            }
        }
    }
}

/// Four concurrent "scrolling" workers ask a serial-queue cache for thumbnails.
private func startCacheTraffic(_ activity: AppActivity, _ everything: DispatchGroup) {
    let cache = ThumbnailCache()
    DispatchQueue.global(qos: .userInitiated).async(group: everything) {
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for lookup in 0..<40 {
                let key = "thumb-\((worker * 3 + lookup) % 16).png"
                if cache.size(for: key) == nil {
                    cache.store(renderThumbnail(for: key), for: key)
                }
                activity.cacheLookups.add()
                simulateBlockingIO(milliseconds: 5)  // the user keeps scrolling
            }
        }
    }
}

/// The feed refresh: 8 stories fetched in parallel with async(group:), merged on notify.
private func startFeedRefresh(_ activity: AppActivity, _ everything: DispatchGroup) {
    let stories = DispatchGroup()
    everything.enter()
    for story in 1...8 {
        DispatchQueue.global(qos: .utility).async(group: stories) {
            simulateBlockingIO(milliseconds: 20 + 10 * (story % 4))
            activity.feedChecksums.withLock { $0[story] = fnv1a("story-\(story)") }
        }
    }
    stories.notify(queue: .main) { everything.leave() }
}

/// A 100 ms heartbeat on its own queue; every tick posts a status update to the main queue.
/// Twenty ticks set the app's running time (about 2 s).
private func startHeartbeat(_ activity: AppActivity, _ everything: DispatchGroup) {
    let heartbeat = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "com.example.app.heartbeat"))
    everything.enter()
    heartbeat.setEventHandler {
        guard !heartbeat.isCancelled else { return }
        if activity.heartbeats.add() == 20 { heartbeat.cancel() }
        everything.enter()
        DispatchQueue.main.async {
            activity.statusUpdates.add()
            everything.leave()
        }
    }
    heartbeat.setCancelHandler { everything.leave() }
    heartbeat.schedule(deadline: .now() + .milliseconds(100), repeating: .milliseconds(100))
    heartbeat.activate()
}

/// Analytics crunching in the background with concurrentPerform.
private func startAnalytics(_ activity: AppActivity, _ everything: DispatchGroup) {
    DispatchQueue.global(qos: .background).async(group: everything) {
        let chunkSize = 2_000
        DispatchQueue.concurrentPerform(iterations: 30) { chunk in
            activity.primes.add(primeCount(in: chunk * chunkSize..<(chunk + 1) * chunkSize))
        }
    }
}

/// Five prefetches on a global queue, spread over the app's lifetime with asyncAfter.
private func startPrefetch(_ activity: AppActivity, _ everything: DispatchGroup) {
    for index in 1...5 {
        everything.enter()
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .milliseconds(300 * index)) {
            simulateBlockingIO(milliseconds: 30)
            activity.prefetched.add()
            everything.leave()
        }
    }
}

// MARK: - clean

/// The results of the clean program, owned by its serial queue.
final class PrimeIndex: @unchecked Sendable {  // `counts` is only touched on `queue`
    let queue = DispatchQueue(label: "com.example.clean.index")
    private var counts: [Int: Int] = [:]

    /// Records one chunk's result on the index queue (the same group tracks it).
    func record(_ primes: Int, forChunk chunk: Int, in group: DispatchGroup) {
        queue.async(group: group) {
            burnCPU(milliseconds: 1)  // stands in for writing the entry to an on-disk index
            self.counts[chunk] = primes
        }
    }

    /// Called on `queue` (the group's notify queue), so reading `counts` is safe.
    var summary: (chunks: Int, primes: Int) { (counts.count, counts.values.reduce(0, +)) }
}

/// A small, well-behaved program: CPU work split over a private concurrent queue (no more items
/// than make sense, none of them blocking), results recorded on a private serial queue, a group
/// to know when everything is done, and a main queue that is never blocked.
func runClean() -> Never {
    let analysis = DispatchQueue(label: "com.example.clean.analysis", attributes: .concurrent)
    let index = PrimeIndex()
    let work = DispatchGroup()
    let chunkSize = 25_000

    for chunk in 0..<8 {
        analysis.async(group: work) {
            let primes = primeCount(in: chunk * chunkSize..<(chunk + 1) * chunkSize)
            index.record(primes, forChunk: chunk, in: work)  // entered before this item leaves
        }
    }
    work.notify(queue: index.queue) {
        let summary = index.summary
        DispatchQueue.main.async {
            print("indexed \(summary.chunks) chunks: \(summary.primes) primes below \(8 * chunkSize)")
            exit(0)
        }
    }
    dispatchMain()
}
