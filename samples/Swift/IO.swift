// Dispatch I/O: a file transformed chunk by chunk through channels, against plain read()/write().
import Foundation

private let inputSize = 8 << 20        // 8 MiB
private let chunkLimit = 1 << 20       // at most 1 MiB per read handler call

/// Fills a file with deterministic pseudo-random lowercase text (words, spaces, newlines).
private func writeSampleText(to path: String) {
    var text = [UInt8](repeating: 0, count: inputSize)
    text.withUnsafeMutableBufferPointer { bytes in
        var state: UInt32 = 12345
        for index in 0..<bytes.count {
            state = state &* 1_103_515_245 &+ 12_345
            let roll = Int((state >> 16) % 32)
            bytes[index] = roll < 26 ? UInt8(97 + roll) : (roll == 31 ? 10 : 32)
        }
    }
    guard FileManager.default.createFile(atPath: path, contents: Data(text)) else {
        fatalError("cannot create \(path)")
    }
}

/// The transformation: ASCII lowercase to uppercase, in place.
private func uppercaseASCII(_ bytes: UnsafeMutableBufferPointer<UInt8>) {
    for index in 0..<bytes.count where bytes[index] &- 97 < 26 {
        bytes[index] &-= 32
    }
}

/// FNV-1a over a whole file, with a non-generic loop (fast enough in debug builds).
private func checksumOfFile(at path: String) -> UInt64 {
    guard let data = FileManager.default.contents(atPath: path) else { fatalError("cannot read \(path)") }
    return data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> UInt64 in
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in raw.bindMemory(to: UInt8.self) {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return hash
    }
}

/// Reads `input` through a random-access channel and writes the uppercased chunks, in order,
/// to a stream channel. Both channels deliver their handlers on one serial queue, so each
/// chunk is transformed and handed to the writer in the order it was read.
private func transformWithDispatchIO(from input: String, to output: String) {
    let queue = DispatchQueue(label: "com.example.io.transform")
    let channelsClosed = DispatchGroup()
    let failure = Locked<Int32>(0)
    func openChannel(_ type: DispatchIO.StreamType, _ path: String, _ flags: Int32) -> DispatchIO {
        channelsClosed.enter()
        guard let channel = DispatchIO(type: type, path: path, oflag: flags, mode: 0o644, queue: queue,
                                       cleanupHandler: { error in
                                           if error != 0 { failure.set(error) }
                                           channelsClosed.leave()
                                       })
        else { fatalError("cannot open a channel for \(path)") }
        return channel
    }
    let reader = openChannel(.random, input, O_RDONLY)
    let writer = openChannel(.stream, output, O_WRONLY | O_CREAT | O_TRUNC)
    reader.setLimit(highWater: chunkLimit)

    let writesDone = DispatchGroup()
    writesDone.enter()  // held until the last chunk has been read
    reader.read(offset: 0, length: Int.max, queue: queue) { done, data, error in
        if let data, !data.isEmpty {
            var chunk = [UInt8](repeating: 0, count: data.count)
            chunk.withUnsafeMutableBufferPointer { bytes in
                _ = data.copyBytes(to: bytes)
                uppercaseASCII(bytes)
            }
            writesDone.enter()
            let transformed = chunk.withUnsafeBytes { DispatchData(bytes: $0) }
            writer.write(offset: 0, data: transformed, queue: queue) { done, _, error in
                if error != 0 { failure.set(error) }
                if done { writesDone.leave() }
            }
        }
        if error != 0 { failure.set(error) }
        if done { writesDone.leave() }
    }
    writesDone.wait()
    reader.close()
    writer.close()
    channelsClosed.wait()  // cleanup handlers ran: both descriptors are closed, data is on disk
    if failure.current != 0 { fatalError("dispatch I/O failed: errno \(failure.current)") }
}

/// The same transformation with a plain read()/write() loop on the calling thread.
private func transformWithPlainIO(from input: String, to output: String) {
    let source = open(input, O_RDONLY)
    let destination = open(output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard source >= 0, destination >= 0 else { fatalError("cannot open files: errno \(errno)") }
    defer { close(source); close(destination) }

    var buffer = [UInt8](repeating: 0, count: chunkLimit)
    buffer.withUnsafeMutableBufferPointer { bytes in
        while true {
            let count = read(source, bytes.baseAddress, bytes.count)
            guard count > 0 else { break }
            let chunk = UnsafeMutableBufferPointer(rebasing: bytes[0..<count])
            uppercaseASCII(chunk)
            var written = 0
            while written < count {
                let result = write(destination, chunk.baseAddress! + written, count - written)
                guard result > 0 else { fatalError("write failed: errno \(errno)") }
                written += result
            }
        }
    }
}

func runDispatchIO() {
    let prefix = (NSTemporaryDirectory() as NSString).appendingPathComponent("qtrace-samples-io-\(getpid())")
    let input = prefix + "-input.txt"
    let dispatchOutput = prefix + "-dispatch.txt"
    let plainOutput = prefix + "-plain.txt"
    defer { for path in [input, dispatchOutput, plainOutput] { unlink(path) } }

    writeSampleText(to: input)

    let dispatchTime = Stopwatch()
    transformWithDispatchIO(from: input, to: dispatchOutput)
    let dispatchMs = dispatchTime.milliseconds

    let plainTime = Stopwatch()
    transformWithPlainIO(from: input, to: plainOutput)
    let plainMs = plainTime.milliseconds

    let inputChecksum = checksumOfFile(at: input)
    let dispatchChecksum = checksumOfFile(at: dispatchOutput)
    let plainChecksum = checksumOfFile(at: plainOutput)
    print("input: \(inputSize) bytes of lowercase text, checksum \(hex(inputChecksum))")
    print("dispatch-io output checksum: \(hex(dispatchChecksum))")
    print("read/write output checksum:  \(hex(plainChecksum))")
    print("outputs identical: \(dispatchChecksum == plainChecksum ? "yes" : "no")")
    note(String(format: "dispatch-io %.1f ms, read/write %.1f ms", dispatchMs, plainMs))
}
