// LTTng-UST tracepoint provider `qtrace`: the LTTng face of the embedded recorder
// (docs/lttng.md). Only the LTTng build of the shim includes it (QTRACE_LTTNG).
//
// One generic event per payload width keeps the provider small and every record compact
// (LTTng's compact event header + vtid context + 6..38 payload bytes): `type`, `flags` and
// `arg` are word 0 of the embedded record (docs/trace-format.md), `a`..`d` its payload words.
// Labels and names travel once, in record_string, never in hot events.
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER qtrace

#undef LTTNG_UST_TRACEPOINT_INCLUDE
// Plain "name.h" (found through -I): "./qtrace_tp.h" is not found by lttng's re-inclusion.
#define LTTNG_UST_TRACEPOINT_INCLUDE "qtrace_tp.h"

#if !defined(QTRACE_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define QTRACE_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

#define QT_TP_WORD_ARGS(...) LTTNG_UST_TP_ARGS(uint8_t, type, uint8_t, flags, uint32_t, arg, __VA_ARGS__)
#define QT_TP_WORD_HEAD \
    lttng_ust_field_integer(uint8_t, type, type) \
    lttng_ust_field_integer(uint8_t, flags, flags) \
    lttng_ust_field_integer(uint32_t, arg, arg)

LTTNG_UST_TRACEPOINT_EVENT(qtrace, record1,
    QT_TP_WORD_ARGS(uint64_t, a),
    LTTNG_UST_TP_FIELDS(QT_TP_WORD_HEAD
        lttng_ust_field_integer(uint64_t, a, a)))

LTTNG_UST_TRACEPOINT_EVENT(qtrace, record2,
    QT_TP_WORD_ARGS(uint64_t, a, uint64_t, b),
    LTTNG_UST_TP_FIELDS(QT_TP_WORD_HEAD
        lttng_ust_field_integer(uint64_t, a, a)
        lttng_ust_field_integer(uint64_t, b, b)))

LTTNG_UST_TRACEPOINT_EVENT(qtrace, record3,
    QT_TP_WORD_ARGS(uint64_t, a, uint64_t, b, uint64_t, c),
    LTTNG_UST_TP_FIELDS(QT_TP_WORD_HEAD
        lttng_ust_field_integer(uint64_t, a, a)
        lttng_ust_field_integer(uint64_t, b, b)
        lttng_ust_field_integer(uint64_t, c, c)))

LTTNG_UST_TRACEPOINT_EVENT(qtrace, record4,
    QT_TP_WORD_ARGS(uint64_t, a, uint64_t, b, uint64_t, c, uint64_t, d),
    LTTNG_UST_TP_FIELDS(QT_TP_WORD_HEAD
        lttng_ust_field_integer(uint64_t, a, a)
        lttng_ust_field_integer(uint64_t, b, b)
        lttng_ust_field_integer(uint64_t, c, c)
        lttng_ust_field_integer(uint64_t, d, d)))

// A record with 0..3 payload words and a string of exactly `length` bytes (already
// truncated to 4096 by the caller, flags bit 7 then set, as in the embedded format).
LTTNG_UST_TRACEPOINT_EVENT(qtrace, record_string,
    QT_TP_WORD_ARGS(const uint64_t *, words, uint8_t, nwords, const char *, text, uint32_t, length),
    LTTNG_UST_TP_FIELDS(QT_TP_WORD_HEAD
        lttng_ust_field_sequence(uint64_t, words, words, uint8_t, nwords)
        lttng_ust_field_sequence_text(char, text, text, uint32_t, length)))

// The header facts of the embedded format, once per process, before its first record.
LTTNG_UST_TRACEPOINT_EVENT(qtrace, process,
    LTTNG_UST_TP_ARGS(uint32_t, pid, uint32_t, ppid, uint32_t, ncpu, uint32_t, main_tid, uint64_t, main_queue,
                      uint64_t, init_mono_ns, uint64_t, init_realtime_ns, const char *, executable,
                      const char *, command_line),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, pid, pid)
        lttng_ust_field_integer(uint32_t, ppid, ppid)
        lttng_ust_field_integer(uint32_t, ncpu, ncpu)
        lttng_ust_field_integer(uint32_t, main_tid, main_tid)
        lttng_ust_field_integer_hex(uint64_t, main_queue, main_queue)
        lttng_ust_field_integer(uint64_t, init_mono_ns, init_mono_ns)
        lttng_ust_field_integer(uint64_t, init_realtime_ns, init_realtime_ns)
        lttng_ust_field_string(executable, executable)
        lttng_ust_field_string(command_line, command_line)))

// Once per thread, before its first record: which process the thread (vtid) belongs to,
// and its name (the embedded format's chunk header name).
LTTNG_UST_TRACEPOINT_EVENT(qtrace, thread,
    LTTNG_UST_TP_ARGS(uint32_t, pid, const char *, name),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, pid, pid)
        lttng_ust_field_string(name, name)))

// An event the shim could not record (the embedded header's dropped_* counters).
LTTNG_UST_TRACEPOINT_EVENT(qtrace, dropped,
    LTTNG_UST_TP_ARGS(uint8_t, type),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint8_t, type, type)))

// The process is exiting normally (the embedded header's final pair and finalized flag).
LTTNG_UST_TRACEPOINT_EVENT(qtrace, process_end,
    LTTNG_UST_TP_ARGS(uint64_t, dropped),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint64_t, dropped, dropped)))

#endif

#include <lttng/tracepoint-event.h>
