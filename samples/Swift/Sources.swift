// Dispatch sources: timer, read and signal sources (Linux has no process or vnode sources).
@preconcurrency import Dispatch  // Linux Dispatch sources are not yet marked Sendable
import Foundation

// MARK: - timer-suspend (picture 6)

/// A 100 ms heartbeat timer. After its second run the handler suspends the timer for four
/// periods; the timer keeps counting while suspended, so the first run after resume reports
/// the four missed fires at once: data = 4 (more on a loaded machine, where the resume is late).
func runTimerSuspend() {
    let queue = DispatchQueue(label: "com.example.heartbeat")
    let timer = DispatchSource.makeTimerSource(queue: queue)
    let period = DispatchTimeInterval.milliseconds(100)
    let runs = Locked(0)
    let cancelled = DispatchSemaphore(value: 0)

    timer.setEventHandler {
        let run = runs.add()
        let data = timer.data
        // stdout tells the same story on any machine; the exact counts go to stderr: on a
        // loaded machine a late handler or a late resume adds fires (data 5, then 3).
        print(run == 3 && data >= 4 ? "handler run 3: data >= 4 (the fires missed while suspended, at once)"
                                    : "handler run \(run)")
        FileHandle.standardError.write(Data("handler run \(run): data=\(data)\n".utf8))
        switch run {
        case 2:
            // Suspending from the handler itself (on the source's queue) makes the moment
            // deterministic: right after the fire at 200 ms.
            timer.suspend()
            print("timer suspended for 4 periods")
            // Resume half-way between the 4th missed fire (600 ms) and the next one (700 ms).
            queue.asyncAfter(deadline: .now() + .milliseconds(450)) {
                timer.resume()
            }
        case 4:
            timer.cancel()
        default:
            break
        }
    }
    timer.setCancelHandler {
        print("timer cancelled after \(runs.current) handler runs")
        cancelled.signal()
    }
    timer.schedule(deadline: .now() + period, repeating: period, leeway: .milliseconds(1))
    timer.activate()
    cancelled.wait()
}

// MARK: - read-source (picture 5)

/// A reader thread would block in read(); a read source instead fires when the pipe has data,
/// and its handler is enqueued on a serial queue. Another thread writes five requests with
/// pauses, then closes its end; at EOF the handler cancels the source, and the cancel handler
/// (never earlier) closes the descriptor.
func runReadSource() {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { fatalError("pipe() failed: errno \(errno)") }
    let readEnd = ends[0], writeEnd = ends[1]
    // A source's handler must never block, so reads on this end return EAGAIN instead.
    _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK)

    let queue = DispatchQueue(label: "com.example.pipe-reader")
    let source = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: queue)
    let unparsed = Locked<[UInt8]>([])
    let handlerRuns = Locked(0)
    let closed = DispatchSemaphore(value: 0)

    source.setEventHandler {
        handlerRuns.add()
        let estimated = Int(source.data)  // bytes available; 0 means end of file
        var chunk = [UInt8](repeating: 0, count: max(estimated, 1))
        let count = read(readEnd, &chunk, chunk.count)
        guard count != 0 else {
            source.cancel()  // EOF: the writer closed its end
            return
        }
        guard count > 0 else { return }  // EAGAIN: nothing after all
        // Messages may arrive split or merged; print only complete lines, in order.
        let lines: [String] = unparsed.withLock { buffer in
            buffer += chunk[0..<count]
            var complete: [String] = []
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                complete.append(String(decoding: buffer[..<newline], as: UTF8.self))
                buffer.removeSubrange(...newline)
            }
            return complete
        }
        for line in lines { print("received: \(line)") }
    }
    source.setCancelHandler {
        close(readEnd)  // only now is it safe to close the descriptor the source watches
        print("end of stream: source cancelled, read end closed")
        closed.signal()
    }
    source.activate()

    let requests = ["GET /index.html", "GET /style.css", "GET /app.js", "GET /logo.png", "GET /favicon.ico"]
    let writer = Thread {
        for request in requests {
            let bytes = Array((request + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
            simulateBlockingIO(milliseconds: 30)
        }
        close(writeEnd)
    }
    writer.name = "pipe-writer"
    writer.start()

    closed.wait()
    note("read source handler runs (varies with coalescing): \(handlerRuns.current)")
}

// MARK: - signal-source

/// Handles SIGUSR1 with a signal source instead of a signal handler, so the handling code runs
/// on a queue and may do anything. The signal is sent three times, each after the previous one
/// was handled.
func runSignalSource() {
    // The source does not replace the signal's disposition: without SIG_IGN the default action
    // of SIGUSR1 (terminate) would still run. libdispatch sees the signal either way.
    signal(SIGUSR1, SIG_IGN)

    let queue = DispatchQueue(label: "com.example.signals")
    let source = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: queue)
    let registered = DispatchSemaphore(value: 0)
    let handled = DispatchSemaphore(value: 0)
    let received = Locked(0)

    // activate() registers the signal asynchronously. A signal sent before registration is
    // ignored (SIG_IGN) and lost, so wait for the registration handler first.
    source.setRegistrationHandler { registered.signal() }
    source.setEventHandler {
        let count = Int(source.data)  // signals merged into this run
        let total = received.add(count)
        print("SIGUSR1 handler: data=\(count), total=\(total)")
        handled.signal()
    }
    source.activate()
    registered.wait()

    for _ in 1...3 {
        // One at a time: a standard signal that is already pending is merged by the kernel, so
        // three quick kill() calls can arrive as one.
        kill(getpid(), SIGUSR1)
        if handled.wait(timeout: .now() + 2) == .timedOut {
            print("SIGUSR1 was not delivered within 2 s")
            break
        }
    }
    source.cancel()
    print("received SIGUSR1 \(received.current) times")
}
