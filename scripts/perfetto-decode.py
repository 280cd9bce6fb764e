#!/usr/bin/env python3
"""Decodes a .pftrace with Perfetto's official protos (the `perfetto` PyPI package) and prints
what a Perfetto importer would build from it, as JSON: tracks, slices (begin/end matched per
track), instants, counters and flows. The tests compare this with qtrace's own analysis.

    python3 scripts/perfetto-decode.py FILE.pftrace > decoded.json

It follows the TracePacket rules the export relies on and fails (exit 1, one line) when the
file breaks one: compressed_packets are zlib-inflated; each sequence's incremental state
(interned strings, packet defaults, its delta clock) starts with SEQ_INCREMENTAL_STATE_CLEARED
and is what SEQ_NEEDS_INCREMENTAL_STATE packets use; a sequence-scoped clock marked
is_incremental adds each packet's timestamp to the previous one; slices end in the order they
began on their track; every interned id must have been defined on its sequence.
"""
import json
import sys
import zlib

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

SLICE_BEGIN, SLICE_END, INSTANT, COUNTER = 1, 2, 3, 4
SEQ_INCREMENTAL_STATE_CLEARED, SEQ_NEEDS_INCREMENTAL_STATE = 1, 2


class DecodeError(Exception):
    pass


class Sequence:
    def __init__(self):
        self.cleared = False
        self.track = None
        self.clock_id = None
        self.clocks = {}  # clock id -> [last value, offset to trace time, incremental]
        self.interned = {"event_names": {}, "debug_annotation_names": {}, "debug_annotation_string_values": {}}


class Decoder:
    def __init__(self):
        self.sequences = {}
        self.tracks = {}
        self.open = {}  # track -> stack of open slices
        self.slices, self.instants, self.counters = [], [], {}
        self.flow_out, self.flow_end = {}, {}
        self.packets = 0

    def packet(self, p):
        self.packets += 1
        if p.HasField("compressed_packets"):
            inner = pb.Trace()
            inner.ParseFromString(zlib.decompress(p.compressed_packets))
            for q in inner.packet:
                self.packet(q)
            return
        if p.HasField("track_descriptor"):
            self.descriptor(p.track_descriptor)
        seq = self.sequences.setdefault(p.trusted_packet_sequence_id, Sequence())
        if p.incremental_state_cleared or p.sequence_flags & SEQ_INCREMENTAL_STATE_CLEARED:
            self.sequences[p.trusted_packet_sequence_id] = seq = Sequence()
            seq.cleared = True
        if p.HasField("trace_packet_defaults"):
            d = p.trace_packet_defaults
            seq.clock_id = d.timestamp_clock_id if d.HasField("timestamp_clock_id") else None
            if d.HasField("track_event_defaults") and d.track_event_defaults.HasField("track_uuid"):
                seq.track = d.track_event_defaults.track_uuid
        if p.HasField("clock_snapshot"):
            self.clock_snapshot(seq, p.clock_snapshot)
        if p.HasField("interned_data"):
            for kind, table in seq.interned.items():
                for entry in getattr(p.interned_data, kind):
                    table[entry.iid] = entry.str.decode() if kind.endswith("values") else entry.name
        if p.HasField("track_event"):
            if p.sequence_flags & SEQ_NEEDS_INCREMENTAL_STATE and not seq.cleared:
                raise DecodeError(f"sequence {p.trusted_packet_sequence_id}: incremental state used before it was cleared")
            self.track_event(seq, self.timestamp(seq, p), p.track_event)

    def descriptor(self, d):
        track = {"uuid": d.uuid, "name": d.name, "parent": d.parent_uuid if d.HasField("parent_uuid") else None}
        if d.HasField("process"):
            track.update(kind="process", pid=d.process.pid, name=d.process.process_name)
        elif d.HasField("thread"):
            track.update(kind="thread", pid=d.thread.pid, tid=d.thread.tid, name=d.thread.thread_name)
        elif d.HasField("counter"):
            track["kind"] = "counter"
        else:
            track["kind"] = "track"
        self.tracks[d.uuid] = track

    def clock_snapshot(self, seq, snapshot):
        boottime = next((c.timestamp for c in snapshot.clocks if c.clock_id == 6), None)
        for c in snapshot.clocks:
            if c.clock_id >= 64:
                if boottime is None:
                    raise DecodeError("a sequence clock without BOOTTIME in its snapshot")
                seq.clocks[c.clock_id] = [c.timestamp, boottime - c.timestamp, c.is_incremental]

    def timestamp(self, seq, p):
        clock = p.timestamp_clock_id if p.HasField("timestamp_clock_id") else seq.clock_id
        if clock is None or clock == 6:
            return p.timestamp
        if clock not in seq.clocks:
            raise DecodeError(f"clock {clock} used before its ClockSnapshot")
        state = seq.clocks[clock]
        state[0] = state[0] + p.timestamp if state[2] else p.timestamp
        return state[0] + state[1]

    def interned(self, seq, kind, iid):
        try:
            return seq.interned[kind][iid]
        except KeyError:
            raise DecodeError(f"{kind} iid {iid} not interned on its sequence") from None

    def annotations(self, seq, event):
        args = {}
        for a in event.debug_annotations:
            name = self.interned(seq, "debug_annotation_names", a.name_iid) if a.HasField("name_iid") else a.name
            if a.HasField("string_value_iid"):
                args[name] = self.interned(seq, "debug_annotation_string_values", a.string_value_iid)
            elif a.HasField("string_value"):
                args[name] = a.string_value
            elif a.HasField("uint_value"):
                args[name] = a.uint_value
            elif a.HasField("int_value"):
                args[name] = a.int_value
        return args

    def track_event(self, seq, ts, e):
        track = e.track_uuid if e.HasField("track_uuid") else seq.track
        if track not in self.tracks:
            raise DecodeError(f"event on track {track}, which no TrackDescriptor describes")
        if e.type == COUNTER:
            value = e.counter_value if e.HasField("counter_value") else e.double_counter_value
            self.counters.setdefault(track, []).append([ts, value])
            return
        if e.type == SLICE_END:
            stack = self.open.get(track)
            if not stack:
                raise DecodeError(f"slice end without a begin on track {track} at {ts}")
            s = stack.pop()
            if ts < s["ts"]:
                raise DecodeError(f"slice ends before it begins on track {track}")
            s["dur"] = ts - s["ts"]
            return
        name = self.interned(seq, "event_names", e.name_iid) if e.HasField("name_iid") else e.name
        event = {"track": track, "ts": ts, "name": name, "args": self.annotations(seq, e)}
        for f in e.flow_ids:
            self.flow_out[f] = event
        for f in e.terminating_flow_ids:
            self.flow_end[f] = event
        if e.type == SLICE_BEGIN:
            stack = self.open.setdefault(track, [])
            event["depth"] = len(stack)
            stack.append(event)
            self.slices.append(event)
        elif e.type == INSTANT:
            self.instants.append(event)

    def result(self):
        dangling = {t: len(s) for t, s in self.open.items() if s}
        if dangling:
            raise DecodeError(f"slices never ended: {dangling}")
        unmatched = set(self.flow_out) ^ set(self.flow_end)
        if unmatched:
            raise DecodeError(f"{len(unmatched)} flows without both ends, e.g. {sorted(unmatched)[:3]}")
        flows = [{"id": f, "from": {"track": self.flow_out[f]["track"], "ts": self.flow_out[f]["ts"]},
                  "to": {"track": self.flow_end[f]["track"], "ts": self.flow_end[f]["ts"],
                         "item": self.flow_end[f]["args"].get("item")}} for f in sorted(self.flow_out)]
        return {"packets": self.packets, "tracks": list(self.tracks.values()), "slices": self.slices,
                "instants": self.instants, "flows": flows,
                "counters": [{"track": t, "points": p} for t, p in self.counters.items()]}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: perfetto-decode.py FILE.pftrace")
    trace = pb.Trace()
    try:
        with open(sys.argv[1], "rb") as f:
            trace.ParseFromString(f.read())
        decoder = Decoder()
        for p in trace.packet:
            decoder.packet(p)
        json.dump(decoder.result(), sys.stdout)
    except (DecodeError, OSError, zlib.error) as e:
        sys.exit(f"perfetto-decode: {e}")
    except Exception as e:  # a protobuf DecodeError: the file is not a Trace
        sys.exit(f"perfetto-decode: not a Perfetto trace: {e}")


if __name__ == "__main__":
    main()
