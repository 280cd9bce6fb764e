// The libbabeltrace2 graph that reads CTF: one src.ctf.fs component per trace directory,
// all muxed by flt.utils.muxer into a simple sink whose consume callback hands each batch
// of messages to a `MessageConsumer`.
import CBabeltrace2
#if canImport(Glibc)
import Glibc
#endif

/// Receives the muxed messages, in time order. Throwing stops the graph.
protocol MessageConsumer: AnyObject {
    func consume(_ message: OpaquePointer) throws
}

/// One run of a babeltrace2 graph over `directories` (each holding a CTF `metadata` file).
final class BabeltraceGraph {
    private let graph: OpaquePointer
    private let consumer: MessageConsumer
    /// The error a consumer threw inside the C callback, rethrown by `run()`.
    fileprivate var consumerError: Error?

    init(directories: [String], consumer: MessageConsumer) throws {
        guard let graph = bt_graph_create(0) else { throw CTFReadError.babeltrace("cannot create a graph") }
        self.graph = graph
        self.consumer = consumer
        // A throw from here on still runs deinit (self is fully initialized), which releases
        // the graph: releasing it here too was a double free.
        try build(directories: directories)
    }

    deinit { bt_graph_put_ref(graph) }

    /// Runs the graph to its end: every message reaches the consumer.
    func run() throws {
        while true {
            let status = bt_graph_run(graph)
            if let consumerError { throw consumerError }
            switch status {
            case BT_GRAPH_RUN_STATUS_OK: return
            case BT_GRAPH_RUN_STATUS_AGAIN: usleep(1000)
            default: throw CTFReadError.babeltrace(Self.takeErrorMessage() ?? "reading the trace failed (status \(status.rawValue))")
            }
        }
    }

    // MARK: Building

    private func build(directories: [String]) throws {
        let ctf = try Self.findPlugin("ctf")
        defer { bt_plugin_put_ref(ctf) }
        let utils = try Self.findPlugin("utils")
        defer { bt_plugin_put_ref(utils) }
        guard let sourceClass = bt_plugin_borrow_source_component_class_by_name_const(ctf, "fs"),
              let muxerClass = bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer") else {
            throw CTFReadError.babeltrace("babeltrace2 plugins src.ctf.fs or flt.utils.muxer not found")
        }
        var muxer: OpaquePointer?
        try check(bt_graph_add_filter_component(graph, muxerClass, "muxer", nil, BT_LOGGING_LEVEL_ERROR, &muxer) == BT_GRAPH_ADD_COMPONENT_STATUS_OK,
                  "cannot add flt.utils.muxer")
        var muxerInputs: UInt64 = 0
        for (index, directory) in directories.enumerated() {
            let source = try addSource(sourceClass, name: "source\(index)", directory: directory)
            for port in 0..<bt_component_source_get_output_port_count(source) {
                // The muxer adds a free input port each time one is connected.
                let output = bt_component_source_borrow_output_port_by_index_const(source, port)
                let input = bt_component_filter_borrow_input_port_by_index_const(muxer, muxerInputs)
                try check(bt_graph_connect_ports(graph, output, input, nil) == BT_GRAPH_CONNECT_PORTS_STATUS_OK,
                          "cannot connect \(directory) to the muxer")
                muxerInputs += 1
            }
        }
        try addSink(after: muxer)
    }

    private func addSource(_ sourceClass: OpaquePointer, name: String, directory: String) throws -> OpaquePointer? {
        let params = bt_value_map_create()
        defer { bt_value_put_ref(params) }
        let inputs = bt_value_array_create()
        defer { bt_value_put_ref(inputs) }
        bt_value_array_append_string_element(inputs, directory)
        bt_value_map_insert_entry(params, "inputs", inputs)
        var source: OpaquePointer?
        let status = bt_graph_add_source_component(graph, sourceClass, name, params, BT_LOGGING_LEVEL_ERROR, &source)
        try check(status == BT_GRAPH_ADD_COMPONENT_STATUS_OK, "cannot open the CTF trace in \(directory)")
        return source
    }

    private func addSink(after muxer: OpaquePointer?) throws {
        var sink: OpaquePointer?
        let status = bt_graph_add_simple_sink_component(
            graph, "qtrace", nil, consumeBatch, nil, Unmanaged.passUnretained(self).toOpaque(), &sink)
        try check(status == BT_GRAPH_ADD_COMPONENT_STATUS_OK, "cannot add the sink")
        let output = bt_component_filter_borrow_output_port_by_index_const(muxer, 0)
        let input = bt_component_sink_borrow_input_port_by_index_const(sink, 0)
        try check(bt_graph_connect_ports(graph, output, input, nil) == BT_GRAPH_CONNECT_PORTS_STATUS_OK,
                  "cannot connect the muxer to the sink")
    }

    private func check(_ ok: Bool, _ what: String) throws {
        guard !ok else { return }
        let detail = Self.takeErrorMessage().map { ": \($0)" } ?? ""
        throw CTFReadError.babeltrace(what + detail)
    }

    private static func findPlugin(_ name: String) throws -> OpaquePointer {
        var plugin: OpaquePointer?
        let status = bt_plugin_find(name, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &plugin)
        guard status == BT_PLUGIN_FIND_STATUS_OK, let plugin else {
            throw CTFReadError.babeltrace("babeltrace2 plugin '\(name)' not found (apt-get install babeltrace2)")
        }
        return plugin
    }

    /// The messages of the current thread's babeltrace2 error (innermost cause last), if any.
    static func takeErrorMessage() -> String? {
        guard let error = bt_current_thread_take_error() else { return nil }
        defer { bt_error_release(error) }
        var messages: [String] = []
        for index in 0..<bt_error_get_cause_count(error) {
            if let cause = bt_error_borrow_cause_by_index(error, index), let text = bt_error_cause_get_message(cause) {
                messages.append(String(cString: text))
            }
        }
        return messages.isEmpty ? nil : messages.reversed().joined(separator: ": ")
    }

    // MARK: Consuming

    /// One batch of messages from the muxer; every message's reference is released here.
    fileprivate func consume(from iterator: OpaquePointer?) -> bt_graph_simple_sink_component_consume_func_status {
        var messages: bt_message_array_const?
        var count: UInt64 = 0
        switch bt_message_iterator_next(iterator, &messages, &count) {
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK: break
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_END: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR
        default: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR
        }
        guard let messages else { return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK }
        var index = 0
        defer { while index < Int(count) { bt_message_put_ref(messages[index]); index += 1 } }
        do {
            while index < Int(count) {
                let message = messages[index]!
                try consumer.consume(message)
                bt_message_put_ref(message)
                index += 1
            }
        } catch {
            consumerError = error
            return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR
        }
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK
    }
}

/// The simple sink's consume function: a C function pointer, so it finds its graph through
/// `user_data`.
private let consumeBatch: bt_graph_simple_sink_component_consume_func = { iterator, userData in
    let graph = Unmanaged<BabeltraceGraph>.fromOpaque(userData!).takeUnretainedValue()
    return graph.consume(from: iterator)
}
