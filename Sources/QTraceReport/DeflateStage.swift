// The report payload's compression, on a thread of its own when a second CPU may run it:
// deflate took a fifth of `report`'s CPU time on the 6M-event starfish trace, and the payload's
// encoding never needs its result, only its buffers back. Either way the deflater gets the
// same calls in the same order, so the stream's bytes are the same.
import QTraceFormat
import QTraceViewModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `PayloadBuilder` asks of its deflater: a segment (a column, or a plane) begins; a
/// buffer of bytes to compress (and, for a segment's first full buffer, to decide its coding
/// by); the end. The deflater, the choice of Huffman coding alone and what deflate had written
/// when the segment began live here, on the compressing side.
final class DeflateStage: @unchecked Sendable {
    /// Buffers of `bufferBytes` the encoding fills while deflate compresses others.
    static let bufferBytes = 1 << 20
    static let bufferCount = 4

    private enum Command {
        case beginSegment
        case feed(PendingBytes, count: Int, mayDecide: Bool)
        case finish
    }

    private let deflater: Deflater
    private var huffmanOnly = false
    private var segmentOutput = 0

    /// With a thread: the commands not yet run, the buffers free to fill, the stream's pieces
    /// once finished (under `mutex`).
    private let threaded: Bool
    private var thread: JoinableThread?
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var commands: [Command] = []
    private var free: [PendingBytes] = []
    private var result: Result<[[UInt8]], Error>?

    /// `thread`: whether to compress on a thread of its own (`.automatic`: with two CPUs).
    init(level: Int32, thread: DecodingThread = .automatic) {
        // Initializing a deflater fails only for lack of memory.
        do { deflater = try Deflater(level: level) } catch { fatalError("zlib: \(error)") }
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
        threaded = thread.wanted(eventCount: .max)
        guard threaded else { return }
        free = (1..<Self.bufferCount).map { _ in PendingBytes(capacity: Self.bufferBytes) }
        // Unretained: the stage ends the thread (`finish`, else `deinit`) before it goes.
        self.thread = JoinableThread { [unowned(unsafe) self] in self.work() }
        if self.thread == nil { fatalError("qtrace: cannot start the compression thread") }
    }

    deinit {
        if let thread {  // never finished (the report failed): the thread is let go
            send(.finish)
            thread.join()
        }
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        pthread_cond_destroy(changed)
        changed.deallocate()
    }

    /// A buffer for the payload's first bytes.
    func firstBuffer() -> PendingBytes { PendingBytes(capacity: Self.bufferBytes) }

    func beginSegment() {
        if threaded { send(.beginSegment) } else { run(.beginSegment) }
    }

    /// Compresses `count` bytes of `buffer`; `mayDecide`: they are the current segment's first
    /// buffer handed over, which decides its coding if it is more than half full. Returns the
    /// buffer to fill next (`buffer` itself without a thread).
    func feed(_ buffer: PendingBytes, count: Int, mayDecide: Bool) -> PendingBytes {
        guard threaded else {
            run(.feed(buffer, count: count, mayDecide: mayDecide))
            return buffer
        }
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        commands.append(.feed(buffer, count: count, mayDecide: mayDecide))
        pthread_cond_signal(changed)
        while free.isEmpty { pthread_cond_wait(changed, mutex) }
        return free.removeLast()
    }

    /// Ends the stream: its pieces, in order.
    func finish() throws -> [[UInt8]] {
        guard threaded else { return try deflater.finishPieces() }
        send(.finish)
        thread?.join()
        thread = nil
        return try result!.get()
    }

    private func send(_ command: Command) {
        pthread_mutex_lock(mutex)
        commands.append(command)
        pthread_cond_signal(changed)
        pthread_mutex_unlock(mutex)
    }

    /// The compression thread: runs the commands in order until `.finish`.
    private func work() {
        while true {
            pthread_mutex_lock(mutex)
            while commands.isEmpty { pthread_cond_wait(changed, mutex) }
            let command = commands.removeFirst()
            pthread_mutex_unlock(mutex)
            if case .finish = command {
                let pieces = Result { try deflater.finishPieces() }
                pthread_mutex_lock(mutex)
                result = pieces
                pthread_mutex_unlock(mutex)
                return
            }
            run(command)
            if case .feed(let buffer, _, _) = command {
                pthread_mutex_lock(mutex)
                free.append(buffer)
                pthread_cond_signal(changed)
                pthread_mutex_unlock(mutex)
            }
        }
    }

    /// One command, on whichever thread compresses.
    private func run(_ command: Command) {
        switch command {
        case .beginSegment:
            if huffmanOnly { setHuffmanOnly(false) }
            segmentOutput = deflater.outputCount
        case .feed(let buffer, let count, let mayDecide):
            let bytes = UnsafeBufferPointer(start: buffer.base, count: count)
            let deciding = mayDecide && count > buffer.capacity / 2
            let huffmanBytes = deciding ? HuffmanEstimate.bytes(bytes) : 0
            // Feeding fails only if the stream is broken, a programming error.
            do { try deflater.feed(bytes) } catch { fatalError("zlib: \(error)") }
            if deciding {
                let deflated = Double(deflater.outputCount - segmentOutput)
                if huffmanBytes <= deflated * PayloadBuilder.huffmanTolerance { setHuffmanOnly(true) }
            }
        case .finish:
            break
        }
    }

    private func setHuffmanOnly(_ on: Bool) {
        do { try deflater.huffmanOnly(on) } catch { fatalError("zlib: \(error)") }
        huffmanOnly = on
    }
}
