// Scenarios for `qtrace record --cpu` (docs/cpu.md): queue items whose CPU time goes to known
// functions, so the tests can check where the samples are attributed. Every function is
// @inline(never): the samples must name it, not its caller.
import Dispatch
import Foundation

enum CPUWork {
    /// The hot function of fx.cpu.hot: most of its time is in its callee `mixRound`.
    /// (`while` loops: in a debug build a `for … in 0..<n` calls IndexingIterator.next() each
    /// turn, which then takes a third of the samples and blurs which function is hot.)
    @inline(never) static func checksumBlock(_ seed: UInt64, rounds: Int) -> UInt64 {
        var value = seed
        var round = 0
        while round < rounds {
            value = mixRound(value, UInt64(round))
            round += 1
        }
        return value
    }

    @inline(never) static func mixRound(_ value: UInt64, _ round: UInt64) -> UInt64 {
        var x = value &+ round &* 0x9E37_79B9_7F4A_7C15
        var turn = 0
        while turn < 64 {
            x = (x ^ (x >> 31)) &* 0xBF58_476D_1CE4_E5B9
            turn += 1
        }
        return x
    }

    /// fx.cpu.primes's work: trial division, nothing shared with the mixers above.
    @inline(never) static func countPrimes(below limit: Int) -> Int {
        var count = 0
        for candidate in 2..<max(limit, 3) where isPrime(candidate) { count += 1 }
        return count
    }

    @inline(never) static func isPrime(_ n: Int) -> Bool {
        var divisor = 2
        while divisor * divisor <= n {
            if n % divisor == 0 { return false }
            divisor += 1
        }
        return true
    }

    /// Runs `work` until the calling thread has used `cpuNs` of CPU time (so a loaded machine
    /// does not shrink the sample count), at most 10 s of wall time.
    static func spend(cpuNs: UInt64, _ work: () -> Void) {
        let until = threadCPUNs() + cpuNs
        let giveUp = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
        while threadCPUNs() < until && DispatchTime.now().uptimeNanoseconds < giveUp { work() }
    }
}

/// `cpu-hot`: 20 items on fx.cpu.hot, each spending 10 ms of CPU in checksumBlock → mixRound.
func cpuHot() {
    let queue = DispatchQueue(label: "fx.cpu.hot")
    nonisolated(unsafe) var sink: UInt64 = 0  // only touched on the serial queue
    for item in 0..<20 {
        queue.async { CPUWork.spend(cpuNs: 10_000_000) { sink &+= CPUWork.checksumBlock(UInt64(item), rounds: 200) } }
    }
    queue.sync {}
    print("cpu-hot done \(sink & 1)")
}

/// `cpu-two-queues`: fx.cpu.mix runs checksumBlock, fx.cpu.primes runs countPrimes, each
/// 15 items of 10 ms CPU, both at once.
func cpuTwoQueues() {
    let mixer = DispatchQueue(label: "fx.cpu.mix"), primes = DispatchQueue(label: "fx.cpu.primes")
    nonisolated(unsafe) var mixed: UInt64 = 0  // each only touched on its serial queue
    nonisolated(unsafe) var counted = 0
    for item in 0..<15 {
        mixer.async { CPUWork.spend(cpuNs: 10_000_000) { mixed &+= CPUWork.checksumBlock(UInt64(item), rounds: 200) } }
        primes.async { CPUWork.spend(cpuNs: 10_000_000) { counted &+= CPUWork.countPrimes(below: 3000) } }
    }
    mixer.sync {}
    primes.sync {}
    print("cpu-two-queues done \(mixed & 1) \(counted > 0)")
}
