// The embedded recorder: per-thread chunks of a MAP_SHARED trace file (docs/trace-format.md).
// Hot path: a bounds check and a few stores into the calling thread's chunk; no lock, no
// allocation, no system call. A mutex is taken only to claim a new chunk (every 64 KiB).
#ifndef QTRACE_RECORDER_H
#define QTRACE_RECORDER_H

#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define QT_LIKELY(x) __builtin_expect(!!(x), 1)
#define QT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define QT_HIDDEN __attribute__((visibility("hidden")))

// The record types (QT_THREAD_START = 1, ...), their payload words and strings, and the values
// their fields take (QT_KIND_*, QT_EF_*, QT_CODE_*, QT_FLAG_*, QT_SNAPSHOT_*, ...): one list,
// from which the Swift reader's declarations are generated.
#include "qtrace_records.h"

/// Site ids that fit the compact ENQUEUE (12 bits); larger ones use the full form.
#define QT_SITE_COMPACT_MAX 4095u

#define QT_MAX_STRING 4096
#define QT_HELD_MAX 16

/// Per-thread recorder state. Zero-initialised TLS: the first record claims a chunk. What an
/// enqueue reads is in the first 64 bytes (one cache line: a context switch between the
/// submitter and the worker on one CPU must not cost an extra line per item).
typedef struct {
    uint8_t *pos, *end;     // free space in the current chunk
    uint64_t id_next, id_limit;
    void *last_noted_queue; // the queue this thread last looked up in the known-queue table
    // The code site this thread last used (shim_sites.c): a loop enqueuing the same closure
    // from the same place finds its site id here without touching the shared table.
    uintptr_t site_code, site_ra;
    uint32_t site;          // its id | QT_SITE_CLOSURE: the capture word is part of the key
    int depth;              // > 0 while the shim is calling into libdispatch (internal calls)
    uintptr_t site_capture; // the Swift closure, for a closure's site
    uint32_t chunk_seq;
    uint32_t generation;    // g_recorder.generation when the chunk was claimed (fork resets)
    pid_t tid;
    int held_count;         // queues of the items running on this thread (innermost last)
    void *held[QT_HELD_MAX];
    uint32_t ring_chunk;    // flight recorder: the chunk this thread writes (index + 1; 0 none)
    // The async chain this thread's last Swift job had (shim_async.c): a task resuming at the
    // same place again finds its code and site here.
    uint32_t chain_site;
    uint64_t chain_key;
    uintptr_t chain_code;
    // Free context slots of function items (shim_slots.c): a LIFO list linked through
    // their first word, so the next enqueue reuses the slot this thread last ran.
    void *slot_free;
    uint32_t slot_free_count;
    void *slot_spare;       // a full batch of free slots, or NULL
    void *last_noted_entry; // last_noted_queue's entry there (a qt_known_queue_t)
} qt_thread_t;

/// qt_thread_t.site's flag: the cached site is a Swift closure's (its capture must match too).
#define QT_SITE_CLOSURE 0x80000000u

extern __thread qt_thread_t qt_tls __attribute__((tls_model("initial-exec")));

/// Whether an environment variable is set to something other than "" or "0" (QTRACE_DISABLE,
/// QTRACE_ARMED, QTRACE_RING_KEEP_ON_EXIT).
static inline int qt_env_flag(const char *name) {
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/// Process-wide switch: 1 records, 0 passes everything through.
extern int qt_enabled;

/// What the shim's gate reads: `qt_enabled`, or, when the recording is armed
/// (QTRACE_ARMED / `qtrace record --off`), the word of the control file that `qtrace on` and
/// `qtrace off` write (shim_threads.c). One dependent load on the hot path.
extern const volatile int *qt_gate;
#define QT_RECORDING (*qt_gate)

QT_HIDDEN uint64_t *qt_reserve_slow(qt_thread_t *t, size_t bytes, unsigned type);
QT_HIDDEN uint64_t qt_next_id_block(void);
/// Counts an event that could not be recorded (type 0: unknown).
QT_HIDDEN void qt_count_dropped(unsigned type);

// Benchmark-only builds (scripts/bench-record.py --breakdown compiles them to show where the
// cost of an item goes): QT_BENCH_NO_CLOCK records 0 instead of reading the clock,
// QT_BENCH_NO_ITEM_RECORDS writes no ENQUEUE/START/END at all.
static inline uint64_t qt_now(void) {
#if defined(QT_BENCH_NO_CLOCK)
    return 0;
#elif defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

#ifdef QTRACE_LTTNG
// The LTTng build (libqtrace-shim-lttng.so) emits tracepoints instead of writing chunks.
#include "lttng/recorder_lttng.h"
#else

/// Space for a record of `bytes` (multiple of 8) in the calling thread's chunk, or NULL.
static inline uint64_t *qt_reserve(qt_thread_t *t, size_t bytes, unsigned type) {
    if (QT_LIKELY(t->pos != NULL && t->pos + bytes <= t->end)) {
        uint64_t *p = (uint64_t *)t->pos;
        t->pos += bytes;
        return p;
    }
    return qt_reserve_slow(t, bytes, type);
}

/// Publishes a record: word 0 is stored last so a reader never sees half a record.
static inline void qt_commit(uint64_t *p, unsigned type, unsigned flags8, size_t bytes, uint32_t arg) {
    uint64_t w0 = (uint64_t)type | ((uint64_t)flags8 << 8) | ((uint64_t)bytes << 16) | ((uint64_t)arg << 32);
    __atomic_store_n(p, w0, __ATOMIC_RELEASE);
}

static inline void qt_rec1(qt_thread_t *t, unsigned type, unsigned flags8, uint32_t arg, uint64_t a) {
    uint64_t *p = qt_reserve(t, 24, type);
    if (QT_UNLIKELY(!p)) return;
    p[1] = qt_now(); p[2] = a;
    qt_commit(p, type, flags8, 24, arg);
}

static inline void qt_rec2(qt_thread_t *t, unsigned type, unsigned flags8, uint32_t arg, uint64_t a, uint64_t b) {
    uint64_t *p = qt_reserve(t, 32, type);
    if (QT_UNLIKELY(!p)) return;
    p[1] = qt_now(); p[2] = a; p[3] = b;
    qt_commit(p, type, flags8, 32, arg);
}

static inline void qt_rec3(qt_thread_t *t, unsigned type, unsigned flags8, uint32_t arg, uint64_t a, uint64_t b, uint64_t c) {
    uint64_t *p = qt_reserve(t, 40, type);
    if (QT_UNLIKELY(!p)) return;
    p[1] = qt_now(); p[2] = a; p[3] = b; p[4] = c;
    qt_commit(p, type, flags8, 40, arg);
}

static inline void qt_rec4(qt_thread_t *t, unsigned type, unsigned flags8, uint32_t arg, uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
    uint64_t *p = qt_reserve(t, 48, type);
    if (QT_UNLIKELY(!p)) return;
    p[1] = qt_now(); p[2] = a; p[3] = b; p[4] = c; p[5] = d;
    qt_commit(p, type, flags8, 48, arg);
}

/// A record with `nwords` payload words followed by a string (truncated at QT_MAX_STRING).
QT_HIDDEN void qt_rec_string(qt_thread_t *t, unsigned type, uint32_t arg, const uint64_t *words, int nwords, const char *s);

// Work item records. The id sits in word 0's arg when it fits 32 bits. Drops are counted
// under the full type, so recorded + dropped still adds up per item. (The shim writes
// ENQUEUE_CS since 1.4; readers still decode 1.2's ENQUEUE_C.)

/// ENQUEUE with its code site (1.4): 24 bytes when the id fits 32 bits, the kind 4 bits, the
/// site 12 bits and the queue 48 bits (user-space addresses); else the full ENQUEUE with the
/// site as a 4th word.
static inline void qt_rec_enqueue_site(qt_thread_t *t, unsigned kind, unsigned flags8, uint64_t id, const void *q,
                                       uint64_t extra, uint32_t site) {
#ifdef QT_BENCH_NO_ITEM_RECORDS
    (void)t; (void)kind; (void)flags8; (void)id; (void)q; (void)extra; (void)site;
    return;
#endif
    uint64_t queue = (uint64_t)(uintptr_t)q;
    // One test for the queue's top 16 bits and the site's beyond 12 (kind < 16 is a constant).
    if (QT_LIKELY(id <= UINT32_MAX && extra == 0 && ((queue >> 48) | (site >> 12)) == 0 && kind < 16)) {
        uint64_t *p = qt_reserve(t, 24, QT_ENQUEUE);
        if (QT_UNLIKELY(!p)) return;
        p[1] = qt_now(); p[2] = queue | ((uint64_t)kind << 48) | ((uint64_t)site << 52);
        qt_commit(p, QT_ENQUEUE_CS, flags8, 24, (uint32_t)id);
        return;
    }
    qt_rec4(t, QT_ENQUEUE, flags8, kind, id, queue, extra, site);
}

/// START: flags8 0 (the compact form carries the kind in flags8, so it has no other flags).
static inline void qt_rec_start(qt_thread_t *t, unsigned kind, uint64_t id) {
#ifdef QT_BENCH_NO_ITEM_RECORDS
    (void)t; (void)kind; (void)id;
    return;
#endif
    if (QT_LIKELY(id <= UINT32_MAX)) {
        uint64_t *p = qt_reserve(t, 16, QT_START);
        if (QT_UNLIKELY(!p)) return;
        p[1] = qt_now();
        qt_commit(p, QT_START_C, kind, 16, (uint32_t)id);
        return;
    }
    qt_rec1(t, QT_START, 0, kind, id);
}

static inline void qt_rec_end(qt_thread_t *t, uint64_t id) {
#ifdef QT_BENCH_NO_ITEM_RECORDS
    (void)t; (void)id;
    return;
#endif
    if (QT_LIKELY(id <= UINT32_MAX)) {
        uint64_t *p = qt_reserve(t, 16, QT_END);
        if (QT_UNLIKELY(!p)) return;
        p[1] = qt_now();
        qt_commit(p, QT_END_C, 0, 16, (uint32_t)id);
        return;
    }
    qt_rec1(t, QT_END, 0, 0, id);
}

// Function items without a slot (1.8; shim_stubs.c): the id stays in the trace, START_F and
// END_F name what the stub knows, and the reader pairs them (docs/trace-format.md).

/// ENQUEUE_F: ENQUEUE_CS's word, then the program's context; the stub is flags8 (the reader
/// knows the flags: a function, a barrier if the kind says so). The caller checked that the
/// queue and the context fit 48 bits and the site 12.
static inline void qt_rec_enqueue_f(qt_thread_t *t, unsigned kind, uint32_t id, const void *q, uint32_t site,
                                    const void *ctx, unsigned stub) {
#ifdef QT_BENCH_NO_ITEM_RECORDS
    (void)t; (void)kind; (void)id; (void)q; (void)site; (void)ctx; (void)stub;
    return;
#endif
    uint64_t *p = qt_reserve(t, 32, QT_ENQUEUE);
    if (QT_UNLIKELY(!p)) return;
    p[1] = qt_now();
    p[2] = (uint64_t)(uintptr_t)q | ((uint64_t)kind << 48) | ((uint64_t)site << 52);
    p[3] = (uint64_t)(uintptr_t)ctx;
    qt_commit(p, QT_ENQUEUE_F, stub, 32, id);
}

/// START_F: the stub (flags8), the context it was given and the queue it runs on, both of 48
/// bits: 24 bytes.
static inline void qt_rec_start_f(qt_thread_t *t, unsigned stub, const void *ctx, const void *q) {
#ifdef QT_BENCH_NO_ITEM_RECORDS
    (void)t; (void)stub; (void)ctx; (void)q;
    return;
#endif
    uint64_t *p = qt_reserve(t, 24, QT_START);
    if (QT_UNLIKELY(!p)) return;
    uint64_t queue = (uint64_t)(uintptr_t)q;
    p[1] = qt_now();
    p[2] = (uint64_t)(uintptr_t)ctx | (queue >> 32) << 48;
    qt_commit(p, QT_START_F, stub, 24, (uint32_t)queue);
}

/// END_F: ends the thread's innermost START_F (of the same stub, flags8).
static inline void qt_rec_end_f(qt_thread_t *t, unsigned stub) {
#ifdef QT_BENCH_NO_ITEM_RECORDS
    (void)t; (void)stub;
    return;
#endif
    uint64_t *p = qt_reserve(t, 16, QT_END);
    if (QT_UNLIKELY(!p)) return;
    p[1] = qt_now();
    qt_commit(p, QT_END_F, stub, 16, 0);
}

#endif // QTRACE_LTTNG

#ifdef QTRACE_LTTNG
// An LTTng session has its own flight recorder (lttng snapshot): nothing to do here.
#define qt_meta_begin(t) (t)
#define qt_meta_end(m, t) ((void)(m), (void)(t))
static inline void qt_snapshot_request(unsigned reason) { (void)reason; }
static inline void qt_snapshot_now(unsigned reason) { (void)reason; }
static inline void qt_ring_workers_changed(int delta) { (void)delta; }
static inline void qt_ring_thread_exit(qt_thread_t *t) { (void)t; }
#else
/// Set when this process records into a flight-recorder ring (recorder_ring.c).
extern int qt_ring_mode;
QT_HIDDEN qt_thread_t *qt_meta_begin_slow(qt_thread_t *t);
QT_HIDDEN void qt_meta_end_slow(void);
QT_HIDDEN int qt_is_meta_cursor(const qt_thread_t *t);
QT_HIDDEN uint64_t *qt_meta_reserve_slow(qt_thread_t *meta, size_t bytes, unsigned type);
/// A thread ends: its ring chunk may be reused.
QT_HIDDEN void qt_ring_thread_exit(qt_thread_t *t);

/// Where a record that names an object for the rest of the run goes (a queue's label, a code
/// site, a module): in a ring, the metadata area that is never overwritten, so a snapshot
/// still names what its events refer to; otherwise the calling thread's chunk. Pair with
/// qt_meta_end.
static inline qt_thread_t *qt_meta_begin(qt_thread_t *t) {
    return QT_UNLIKELY(qt_ring_mode) ? qt_meta_begin_slow(t) : t;
}
static inline void qt_meta_end(qt_thread_t *m, qt_thread_t *t) {
    if (QT_UNLIKELY(m != t)) qt_meta_end_slow();
}

/// Asks the snapshot thread for a snapshot (async-signal-safe; nothing without a ring).
QT_HIDDEN void qt_snapshot_request(unsigned reason);
/// Writes a snapshot now, on the calling thread (a thread about to deadlock).
QT_HIDDEN void qt_snapshot_now(unsigned reason);
/// A Dispatch worker thread started (+1) or ended (-1): a ring snapshots an explosion.
QT_HIDDEN void qt_ring_workers_changed(int delta);
#endif

/// A new unique item id (threads draw blocks of 1024 from a global counter).
static inline uint64_t qt_next_id(qt_thread_t *t) {
    if (QT_UNLIKELY(t->id_next == t->id_limit)) {
        t->id_next = qt_next_id_block();
        t->id_limit = t->id_next + 1024;
    }
    return t->id_next++;
}

/// Opens the trace file if needed; 1 when recording is possible.
QT_HIDDEN int qt_recorder_open(void);
QT_HIDDEN void qt_recorder_init_from_env(void);
QT_HIDDEN void qt_recorder_after_fork_child(void);
/// exec() is about to replace the image (1): the trace ends here as at exit, flagged as an
/// exec; exec failed (0): the process goes on, its trace open again.
QT_HIDDEN void qt_recorder_exec(int replacing);
QT_HIDDEN void qt_recorder_set_main_queue(uint64_t q);
QT_HIDDEN pid_t qt_gettid(void);

#endif
