// An HTTP/1.1 server on SwiftNIO whose request handlers are async functions (as in Hummingbird
// or Vapor): each request's work runs as a Swift task on Dispatch, started from an event-loop
// thread. It listens on 127.0.0.1 (an ephemeral port unless given), prints "listening on PORT",
// and on SIGTERM (a Dispatch signal source) closes its socket and exits 0.
//
//   GET /hello    -> "hello N" (N: requests served so far, counted by an actor)
//   GET /sum/K    -> the sum 0..<K computed in the task (K ≤ 1,000,000)
import Dispatch
import NIOCore
import NIOHTTP1
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// Shared state behind an actor: every request hops onto it.
actor RequestCounter {
    private var served = 0
    func next() -> Int {
        served += 1
        return served
    }
    var total: Int { served }
}

let counter = RequestCounter()

func respond(to uri: String) async -> (HTTPResponseStatus, String) {
    let number = await counter.next()
    if uri == "/hello" { return (.ok, "hello \(number)\n") }
    if uri.hasPrefix("/sum/"), let limit = Int(uri.dropFirst(5)), (0...1_000_000).contains(limit) {
        var sum = 0
        for value in 0..<limit { sum &+= value }
        return (.ok, "sum \(sum)\n")
    }
    return (.notFound, "not found\n")
}

final class HTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private var uri = ""
    private var keepAlive = true

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            uri = head.uri
            keepAlive = head.isKeepAlive
        case .body:
            break
        case .end:
            let uri = self.uri, keepAlive = self.keepAlive
            let promise = context.eventLoop.makePromise(of: (HTTPResponseStatus, String).self)
            promise.completeWithTask { await respond(to: uri) }
            // Back on the event loop: the context may only be used there.
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            promise.futureResult.whenSuccess { status, body in
                let (handler, context) = bound.value
                handler.write(status: status, body: body, keepAlive: keepAlive, context: context)
            }
        }
    }

    private func write(status: HTTPResponseStatus, body: String, keepAlive: Bool, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain")
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        var buffer = context.channel.allocator.buffer(capacity: body.utf8.count)
        buffer.writeString(body)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

setvbuf(stdout, nil, _IOLBF, 0)
let port = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 0 : 0
let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
let server = try ServerBootstrap(group: group)
    .serverChannelOption(ChannelOptions.backlog, value: 256)
    .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
            try channel.pipeline.syncOperations.addHandler(HTTPHandler())
        }
    }
    .bind(host: "127.0.0.1", port: port)
    .wait()
print("listening on \(server.localAddress?.port ?? 0)")

// SIGTERM closes the listening socket; main then shuts the loops down and exits normally.
signal(SIGTERM, SIG_IGN)
let termination = DispatchSource.makeSignalSource(signal: SIGTERM, queue: DispatchQueue(label: "server.signals"))
termination.setEventHandler { server.close(promise: nil) }
termination.resume()

try server.closeFuture.wait()
try group.syncShutdownGracefully()
let served = DispatchSemaphore(value: 0)
nonisolated(unsafe) var total = 0
Task {
    total = await counter.total
    served.signal()
}
served.wait()
print("served \(total) requests")
