// Small helpers shared by the scenarios. Nothing here touches Dispatch, so that a trace of a
// scenario shows only the Dispatch traffic the scenario itself is about.
import Foundation
import Glibc

/// A value guarded by a mutex. Scenarios use it for bookkeeping (counters, result lists) that
/// several threads update; a serial queue would work too but would add queue traffic to the
/// trace that has nothing to do with the scenario being shown.
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) { self.value = value }

    @discardableResult
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var current: Value { withLock { $0 } }

    func set(_ newValue: Value) { withLock { $0 = newValue } }
}

extension Locked where Value == Int {
    /// Adds `amount` and returns the new total.
    @discardableResult
    func add(_ amount: Int = 1) -> Int { withLock { $0 += amount; return $0 } }
}

extension Locked {
    func append<Element>(_ element: Element) where Value == [Element] {
        withLock { $0.append(element) }
    }
}

/// Counts how many pieces of work run at the same moment and remembers the peak, so a scenario
/// can check a property such as "a serial queue runs one item at a time" and print it.
final class ConcurrencyGauge: Sendable {
    private let state = Locked((running: 0, peak: 0))

    func enter() {
        state.withLock { $0.running += 1; $0.peak = max($0.peak, $0.running) }
    }

    func leave() { state.withLock { $0.running -= 1 } }

    /// Runs `body` while counted as running.
    func measure<Result>(_ body: () throws -> Result) rethrows -> Result {
        enter()
        defer { leave() }
        return try body()
    }

    var running: Int { state.withLock { $0.running } }
    var peak: Int { state.withLock { $0.peak } }
}

/// Objects that must live until the process exits. libdispatch crashes ("BUG IN CLIENT")
/// when the last reference to a suspended or never-activated source is released, so the
/// pitfall scenarios park such objects here instead of letting them go out of scope.
let keptUntilExit = Locked<[AnyObject]>([])

/// Wall-clock stopwatch; timings only ever go to stderr, never to stdout.
struct Stopwatch {
    private let start = DispatchTime.now().uptimeNanoseconds
    var milliseconds: Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 }
}

/// Diagnostic output that is allowed to vary between runs (timings, thread counts, completion
/// orders). stdout stays deterministic so a test can compare traced and untraced runs.
func note(_ message: String) {
    FileHandle.standardError.write(Data("[qtrace-samples] \(message)\n".utf8))
}

/// Simulates blocking I/O (a network round trip, a disk read): the thread sleeps off-CPU.
func simulateBlockingIO(milliseconds: Int) {
    usleep(UInt32(milliseconds) * 1000)
}

/// Keeps the CPU busy for about `milliseconds`, like real computation would.
func burnCPU(milliseconds: Double) {
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds * 1e6)
    var x: UInt64 = 0x9E37_79B9_7F4A_7C15
    while DispatchTime.now().uptimeNanoseconds < deadline {
        for _ in 0..<256 { x = x &* 6364136223846793005 &+ 1442695040888963407 }
    }
    blackHole(x)
}

/// Keeps the optimizer from deleting computations whose result is not otherwise used.
@inline(never)
func blackHole<T>(_ value: T) {}

/// FNV-1a 64-bit: a deterministic checksum for strings and byte buffers.
func fnv1a<Bytes: Sequence>(_ bytes: Bytes, seed: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64
where Bytes.Element == UInt8 {
    var hash = seed
    for byte in bytes {
        hash ^= UInt64(byte)
        hash = hash &* 0x100_0000_01b3
    }
    return hash
}

func fnv1a(_ text: String) -> UInt64 { fnv1a(text.utf8) }

func hex(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
}

/// Counts the primes in `range` by trial division: deterministic, CPU-bound work whose cost
/// grows with the numbers, which makes it a good stand-in for "real computation".
func primeCount(in range: Range<Int>) -> Int {
    var count = 0
    for candidate in range where candidate >= 2 {
        var isPrime = true
        var divisor = 2
        while divisor * divisor <= candidate {
            if candidate % divisor == 0 { isPrime = false; break }
            divisor += 1
        }
        if isPrime { count += 1 }
    }
    return count
}
