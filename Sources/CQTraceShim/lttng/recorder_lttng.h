// The LTTng recorder's hot path (included by recorder.h when QTRACE_LTTNG is defined): the
// qt_rec* functions emit `qtrace:*` tracepoints instead of writing chunks. The timestamp is
// LTTng's clock and the thread is the vtid context; everything else is the embedded
// record's word 0 and payload, so a reader rebuilds the same events (docs/lttng.md).
#ifndef QTRACE_RECORDER_LTTNG_H
#define QTRACE_RECORDER_LTTNG_H

#include "qtrace_tp.h"

// qt_thread_t.pos is a chunk pointer in the embedded recorder. Here it only says "this
// thread has announced itself" (qtrace:thread emitted), which is also what shim_threads.c's
// thread-exit hook tests before recording THREAD_EXIT.
#define QT_LTTNG_THREAD_ANNOUNCED ((uint8_t *)1)

/// Emits qtrace:process (once per process) and qtrace:thread for the calling thread.
QT_HIDDEN void qt_lttng_announce_thread(qt_thread_t *t);

/// A thread's first record announces it, but only once tracing is on: a session started
/// after the program still gets the process and thread facts.
static inline void qt_lttng_prologue(qt_thread_t *t) {
    if (QT_UNLIKELY(t->pos != QT_LTTNG_THREAD_ANNOUNCED) && lttng_ust_tracepoint_enabled(qtrace, thread))
        qt_lttng_announce_thread(t);
}

static inline void qt_rec1(qt_thread_t *t, unsigned type, unsigned flags8, uint32_t arg, uint64_t a) {
    qt_lttng_prologue(t);
    lttng_ust_tracepoint(qtrace, record1, (uint8_t)type, (uint8_t)flags8, arg, a);
}

static inline void qt_rec2(qt_thread_t *t, unsigned type, unsigned flags8, uint32_t arg, uint64_t a, uint64_t b) {
    qt_lttng_prologue(t);
    lttng_ust_tracepoint(qtrace, record2, (uint8_t)type, (uint8_t)flags8, arg, a, b);
}

static inline void qt_rec3(qt_thread_t *t, unsigned type, unsigned flags8, uint32_t arg, uint64_t a, uint64_t b, uint64_t c) {
    qt_lttng_prologue(t);
    lttng_ust_tracepoint(qtrace, record3, (uint8_t)type, (uint8_t)flags8, arg, a, b, c);
}

static inline void qt_rec4(qt_thread_t *t, unsigned type, unsigned flags8, uint32_t arg, uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
    qt_lttng_prologue(t);
    lttng_ust_tracepoint(qtrace, record4, (uint8_t)type, (uint8_t)flags8, arg, a, b, c, d);
}

// Work item records: LTTng keeps the full ENQUEUE/START/END forms (its events are
// self-describing; the compact forms only save trace-file pages).
static inline void qt_rec_enqueue_site(qt_thread_t *t, unsigned kind, unsigned flags8, uint64_t id, const void *q,
                                       uint64_t extra, uint32_t site) {
    qt_rec4(t, QT_ENQUEUE, flags8, kind, id, (uint64_t)(uintptr_t)q, extra, site);
}

static inline void qt_rec_start(qt_thread_t *t, unsigned kind, uint64_t id) { qt_rec1(t, QT_START, 0, kind, id); }

static inline void qt_rec_end(qt_thread_t *t, uint64_t id) { qt_rec1(t, QT_END, 0, 0, id); }

/// A record with `nwords` payload words and a string (truncated at QT_MAX_STRING).
QT_HIDDEN void qt_rec_string(qt_thread_t *t, unsigned type, uint32_t arg, const uint64_t *words, int nwords, const char *s);

#endif
