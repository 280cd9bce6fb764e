// Using the worker pool well (concurrentPerform, a semaphore as a limit) and badly (blocking
// inside items until libdispatch adds threads).
import Foundation

// MARK: - concurrent-perform

/// Counts the primes below 512,000 in 64 chunks with concurrentPerform (the caller blocks
/// while the chunks run on the workers and on the calling thread), then once more in a plain
/// loop to check the result. The speedup goes to stderr.
func runConcurrentPerform() {
    let chunkCount = 64, chunkSize = 8_000
    @Sendable func chunkRange(_ chunk: Int) -> Range<Int> { chunk * chunkSize..<(chunk + 1) * chunkSize }

    var parallelCounts = [Int](repeating: 0, count: chunkCount)
    let parallelTime = Stopwatch()
    parallelCounts.withUnsafeMutableBufferPointer { counts in
        // Each iteration writes only its own slot, so no lock is needed.
        nonisolated(unsafe) let slots = counts
        DispatchQueue.concurrentPerform(iterations: chunkCount) { chunk in
            slots[chunk] = primeCount(in: chunkRange(chunk))
        }
    }
    let parallelMs = parallelTime.milliseconds

    let serialTime = Stopwatch()
    let serialCounts = (0..<chunkCount).map { primeCount(in: chunkRange($0)) }
    let serialMs = serialTime.milliseconds

    print("chunks: \(chunkCount) x \(chunkSize) numbers")
    print("primes below \(chunkCount * chunkSize): \(parallelCounts.reduce(0, +))")
    print("first chunks: " + parallelCounts.prefix(4).map(String.init).joined(separator: " "))
    print("matches the serial loop: \(parallelCounts == serialCounts ? "yes" : "no")")
    note(String(format: "concurrentPerform %.1f ms, serial loop %.1f ms, speedup %.2fx",
                parallelMs, serialMs, serialMs / parallelMs))
}

// MARK: - semaphore-limit

/// Eight uploads on a private concurrent queue, at most two at a time: the submitting thread
/// takes a semaphore slot before each async, and each upload gives its slot back when done.
/// (Waiting inside the items instead would park worker threads; see thread-explosion.)
func runSemaphoreLimit() {
    let uploads = DispatchQueue(label: "com.example.uploads", attributes: .concurrent)
    let slots = DispatchSemaphore(value: 2)
    let inFlight = ConcurrencyGauge()
    let allDone = DispatchGroup()
    let uploaded = Locked<[String]>([])

    for index in 1...8 {
        slots.wait()  // blocks while two uploads are in flight
        uploads.async(group: allDone) {
            inFlight.measure { simulateBlockingIO(milliseconds: 40) }
            uploaded.append("file-\(index)")
            slots.signal()
        }
    }
    allDone.wait()

    print("uploaded \(uploaded.current.count) files: " + uploaded.current.sorted().joined(separator: " "))
    print("limit respected (never more than 2 uploads at once): \(inFlight.peak <= 2 ? "yes" : "no")")
    note("most uploads at once (varies): \(inFlight.peak)")
}

// MARK: - thread-explosion (picture 4)

/// A backend with only an asynchronous, callback-style API (replies come 150 ms later on the
/// backend's own serial queue). 150 ms keeps the blocked stretch clearly above the 100 ms the
/// thread-explosion finding requires, even on a loaded machine.
final class SlowBackend: Sendable {
    private let replies = DispatchQueue(label: "com.example.backend.replies")

    func request(_ id: Int, reply: @escaping @Sendable (Int) -> Void) {
        replies.asyncAfter(deadline: .now() + .milliseconds(150)) { reply(id * 2) }
    }

    /// The anti-pattern: making the call synchronous by blocking on a semaphore. Every caller
    /// that runs on a Dispatch worker parks that worker for the whole round trip.
    func requestAndWait(_ id: Int) -> Int {
        let answered = DispatchSemaphore(value: 0)
        let answer = Locked(0)
        request(id) { value in
            answer.set(value)
            answered.signal()
        }
        answered.wait()
        return answer.current
    }
}

/// Records which threads ran items and how many items were blocked at once.
final class ThreadCensus: Sendable {
    private let threads = Locked(Set<UInt>())
    let blocked = ConcurrencyGauge()

    func recordCurrentThread() { threads.withLock { _ = $0.insert(UInt(pthread_self())) } }
    var threadCount: Int { threads.current.count }
}

/// Part 1: 40 requests on a private concurrent queue each block in `requestAndWait`. On Linux
/// the pool behind such queues grows slowly (libdispatch's monitor adds about one thread per
/// second while the workers are blocked), so the work crawls along a few items at a time.
/// Part 2: 16 connections, each with its own serial queue, block the same way. Serial queues
/// use the "overcommit" pool, which starts a thread per blocked queue at once.
func runThreadExplosion() {
    let backend = SlowBackend()
    let cpus = ProcessInfo.processInfo.activeProcessorCount

    let requests = DispatchQueue(label: "com.example.requests", attributes: .concurrent)
    let requestCensus = ThreadCensus()
    let requestsDone = DispatchGroup()
    let answers = Locked(0)
    let requestTime = Stopwatch()
    for id in 1...40 {
        requests.async(group: requestsDone) {
            requestCensus.recordCurrentThread()
            let answer = requestCensus.blocked.measure { backend.requestAndWait(id) }
            answers.add(answer)
        }
    }
    requestsDone.wait()
    print("part 1: 40 blocking requests on a concurrent queue finished, answers sum to \(answers.current)")
    note(String(format: "part 1: %.0f ms, %d worker threads for %d CPUs, at most %d items blocked at once",
                requestTime.milliseconds, requestCensus.threadCount, cpus, requestCensus.blocked.peak))

    let connectionCensus = ThreadCensus()
    let connectionsDone = DispatchGroup()
    let connectionTime = Stopwatch()
    for id in 1...16 {
        let connection = DispatchQueue(label: "com.example.connection-\(id)")
        connection.async(group: connectionsDone) {
            connectionCensus.recordCurrentThread()
            _ = connectionCensus.blocked.measure { backend.requestAndWait(id) }
        }
    }
    connectionsDone.wait()
    print("part 2: 16 connections on their own serial queues finished")
    note(String(format: "part 2: %.0f ms, %d worker threads for %d CPUs, at most %d items blocked at once",
                connectionTime.milliseconds, connectionCensus.threadCount, cpus, connectionCensus.blocked.peak))
}
