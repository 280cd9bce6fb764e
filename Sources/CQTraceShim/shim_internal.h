// The interposer's private header: what its files (shim_*.c) share. The interposer is qtrace's
// definitions of libdispatch's exported C API. Each forwards to the real function (dlsym
// RTLD_NEXT) and records events. Preloaded, it sees every call of an unmodified program;
// linked into an app (QTrace library), the executable's definitions win.
//
// Rules that keep the traced program's behaviour unchanged (docs/platform.md):
// - libdispatch calls its own exported functions through the PLT: a call whose return
//   address is inside libdispatch.so, or made while the shim itself is calling into
//   libdispatch (qt_tls.depth > 0), is internal and passed through unrecorded.
// - Work items are re-submitted through the `_f` variants, so no allocation is added per
//   item: a plain block's own heap copy is the context and carries the item id;
//   dispatch_async_f's function is replaced by a stub that knows it (its context passes
//   through untouched); other functions take a context slot from a per-thread cache. Blocks made by dispatch_block_create (DispatchWorkItem,
//   which carry barrier/QoS flags libdispatch reads from the block) are never re-wrapped:
//   their inner block is wrapped when they are created instead.
// - Nothing here references libdispatch or BlocksRuntime symbols directly (weak or dlsym):
//   every process that inherits LD_PRELOAD loads the shim, Dispatch user or not.
//
// The files, by role: shim_resolve.c (the real functions, code ranges), shim_blocks.c (item
// trampolines, wrapper blocks), shim_submit.c (async/sync/after/apply, deadlock detection),
// shim_queues.c (queues, object tables, DispatchWorkItem), shim_slots.c (function items' context slots), shim_stubs.c (function items without a slot), shim_groups.c (groups,
// semaphores), shim_once.c (dispatch_once waits), shim_sources.c (sources, Dispatch I/O), shim_threads.c (threads, annotations,
// process life cycle), shim_exec.c (exec: the trace ends where the image is replaced), shim_foundation.c (Foundation's
// operations, read through shim_swift_call.S), shim_runloop.c (Foundation's run loop timers and perform blocks), shim_sites.c (code sites, the module map),
// shim_async.c (Swift jobs' tasks and async stacks), shim_actors.c and shim_continuations.c
// (actor hops, continuations: entered from shim_swift_entries.S). Helpers that hot paths
// inline stay `static inline` here.
#ifndef QTRACE_SHIM_INTERNAL_H
#define QTRACE_SHIM_INTERNAL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "recorder.h"
#include "shim_sites.h"
#include "qtrace_shim.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void (*qt_fn_t)(void *);
typedef void (*qt_apply_fn_t)(void *, size_t);

// ---- Blocks ABI (libBlocksRuntime), without -fblocks ----

struct qt_block_layout {
    void *isa;
    int flags;
    int reserved;
    void *invoke;
    void *descriptor;
};

#define QT_BLOCK_NEEDS_FREE (1 << 24)
#define QT_BLOCK_HAS_COPY_DISPOSE (1 << 25)
#define QT_BLOCK_IS_GLOBAL (1 << 28)

extern void *_Block_copy(const void *) __attribute__((weak));
extern void _Block_release(const void *) __attribute__((weak));
extern void *_NSConcreteStackBlock[32] __attribute__((weak));

static inline void qt_invoke_block(void *b) { ((void (*)(void *))((struct qt_block_layout *)b)->invoke)(b); }

// ---- the real functions (shim_resolve.c) ----

typedef struct {
#define QT_REAL(field, symbol, ret, params) ret (*field) params;
#include "shim_functions.h"
#undef QT_REAL
} qt_real_t;

QT_HIDDEN extern qt_real_t real;

QT_HIDDEN extern uintptr_t g_dispatch_lo, g_dispatch_hi;      // libdispatch.so's code
QT_HIDDEN extern uintptr_t g_concurrency_lo, g_concurrency_hi; // libswift_Concurrency.so's code
QT_HIDDEN extern void *g_special_invoke;                       // invoke function of DispatchWorkItem blocks
QT_HIDDEN extern void *g_main_queue;
QT_HIDDEN extern void *g_attr_concurrent;
/// How many source types SOURCE_CREATE tells apart (QT_SOURCE_TYPE_LIST: 0 ..< count).
#define QT_COUNT_VALUE(c_name, swift_name, value) +1
enum { QT_SOURCE_TYPE_COUNT = 0 QT_SOURCE_TYPE_LIST(QT_COUNT_VALUE) };
#undef QT_COUNT_VALUE
QT_HIDDEN extern const void *g_source_types[QT_SOURCE_TYPE_COUNT];
QT_HIDDEN extern pthread_once_t g_resolve_once;

QT_HIDDEN void resolve_all(void);

/// The process whose trace this memory holds (set at load and in a fork's child): a vfork
/// child shares the memory but not the pid (shim_exec.c).
QT_HIDDEN extern pid_t g_process_pid;

/// Resolves the real functions once, however early the first call comes.
static inline void qt_resolve(void) {
    if (QT_UNLIKELY(real.async == NULL)) pthread_once(&g_resolve_once, resolve_all);
}

/// A user call is recorded; libdispatch's calls to itself and the shim's own are not.
static inline int qt_is_user_call(qt_thread_t *t, void *ra) {
    uintptr_t a = (uintptr_t)ra;
    return QT_RECORDING && t->depth == 0 && !(a >= g_dispatch_lo && a < g_dispatch_hi);
}

/// QT_EF_CONCURRENCY for a call from libswift_Concurrency. Only the `_f` entry points ask: the
/// runtime submits every job as a function (dispatch_async_f, dispatch_after_f; verified in
/// docs/platform.md), so the block entry points skip the two compares.
static inline unsigned qt_caller_flags(void *ra) {
    uintptr_t a = (uintptr_t)ra;
    return (a >= g_concurrency_lo && a < g_concurrency_hi) ? QT_EF_CONCURRENCY : 0;
}

#define QT_PROLOGUE(fn)                 \
    qt_resolve();                       \
    qt_thread_t *t = &qt_tls;           \
    void *ra = __builtin_return_address(0); \
    (void)ra;

// ---- object tables: pointer -> facts, lock-free open addressing (shim_queues.c) ----

typedef struct { uintptr_t key; uint64_t a, b; } qt_entry_t;

#define QT_TABLE_SIZE 16384
QT_HIDDEN extern qt_entry_t g_queues[QT_TABLE_SIZE];     // queue -> (attrs | QT_Q_KNOWN, target)

#define QT_Q_CONCURRENT 1u
#define QT_Q_INACTIVE 2u
#define QT_Q_GLOBAL (1u << 30)
#define QT_Q_KNOWN (1ull << 40)

static inline size_t qt_hash(uintptr_t key, size_t size) {
    return (size_t)((key >> 4) * 0x9E3779B97F4A7C15ull >> 20) & (size - 1);
}

// A static function in every file, not `inline` and not one shared copy: as in the single
// file the interposer once was, the compiler inlines the lookups (insert 0) into the hot
// paths and keeps the inserts out of line (one shared copy would cost a call per lookup).
__attribute__((unused)) static qt_entry_t *table_find(qt_entry_t *tab, size_t size, uintptr_t key, int insert) {
    size_t i = qt_hash(key, size);
    for (int probe = 0; probe < 64; probe++, i = (i + 1) & (size - 1)) {
        uintptr_t k = __atomic_load_n(&tab[i].key, __ATOMIC_ACQUIRE);
        if (k == key) return &tab[i];
        if (k == 0) {
            if (!insert) return NULL;
            uintptr_t expected = 0;
            if (__atomic_compare_exchange_n(&tab[i].key, &expected, key, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
                || expected == key)
                return &tab[i];
        }
    }
    return NULL;
}

static inline const char *label_of(void *q) {
    const char *l = q && real.queue_get_label ? real.queue_get_label(q) : NULL;
    return l ? l : "";
}

// ---- known queues: what every enqueue reads (shim_queues.c) ----
// An enqueue needs two facts about its queue: that it is known (its QUEUE_CREATE or QUEUE_INFO
// is in the trace) and the slot last enqueued onto it (slot_chain). In g_queues, whose 32-byte
// entries are placed by a hash, every queue of a program with many was a line of its own that
// the other memory an item touches had evicted: the key compare was the shim's largest cost in
// dispatch_async_f on the starfish load (docs/performance.md, "Full rate, fourth pass"). These
// two facts live in 16-byte entries, four to a 64-byte set chosen by the queue's address at
// 512-byte granularity: queues allocated one after another (~160-200 bytes apart here) share
// a line. A queue whose set is full takes a way from another (its chain link, a hint, is lost);
// the table only ever holds queues g_queues knows, so a miss only costs the g_queues lookup.

typedef struct { uintptr_t queue; void *last; } qt_known_queue_t;
#define QT_KNOWN_WAYS 4
#define QT_KNOWN_SETS 2048
typedef struct { qt_known_queue_t way[QT_KNOWN_WAYS]; } __attribute__((aligned(64))) qt_known_set_t;
QT_HIDDEN extern qt_known_set_t g_known_queues[QT_KNOWN_SETS];

/// The set of queue `q`: 512 bytes of address per set, so queues allocated one after another
/// fill neighbouring sets, and any 1 MiB of one 64 MiB region maps onto distinct sets. The
/// region's hash, XORed in (a permutation of the sets), keeps malloc's per-thread arenas,
/// which start at multiples of 64 MiB, off each other's sets.
static inline qt_known_set_t *known_set_of(uintptr_t q) {
    uintptr_t region = (q >> 26) * 0x9E3779B97F4A7C15ull >> 40;
    return &g_known_queues[((q >> 9) ^ region) & (QT_KNOWN_SETS - 1)];
}

static inline qt_known_queue_t *known_queue_find(uintptr_t q) {
    qt_known_set_t *s = known_set_of(q);
    for (int w = 0; w < QT_KNOWN_WAYS; w++)
        if (__atomic_load_n(&s->way[w].queue, __ATOMIC_ACQUIRE) == q) return &s->way[w];
    return NULL;
}

/// Enters a queue that g_queues knows (never 0); its entry, possibly taken from another queue.
QT_HIDDEN qt_known_queue_t *known_queue_insert(uintptr_t q);
/// note_queue's miss: records QUEUE_INFO the first time a queue that the shim did not see
/// created is used, and enters the queue in the known table.
QT_HIDDEN void note_queue_miss(qt_thread_t *t, void *q);

static inline void note_queue(qt_thread_t *t, void *q) {
    // Submitters usually target the same queue again and again: skip the lookup then.
    if (QT_UNLIKELY(q == NULL) || QT_LIKELY(q == t->last_noted_queue)) return;
    qt_known_queue_t *k = known_queue_find((uintptr_t)q);
    if (QT_LIKELY(k != NULL)) { t->last_noted_queue = q; t->last_noted_entry = k; return; }
    note_queue_miss(t, q);
}

// ---- context slots: per-thread LIFO caches, as libdispatch's continuations (shim_slots.c) ----
// A function item's slot is written at enqueue and read when the item runs. Taken from a
// ring indexed by the item id, slots streamed through 32 MiB whatever the number of pending
// items, so the read at run time missed the cache (libdispatch's starfish pattern: a third of
// the traced program's samples on that one load). A slot now goes back to the cache of the
// thread that ran its item, and that thread's next enqueue (a reply, a next step) takes it
// again while it is still in the cache: the slots in use are about the pending items.

typedef struct qt_slot {
    void *work;         // block or function; the next free slot while in a cache
    void *ctx;          // function context
    uint64_t id;        // item id | kind << 56
    struct qt_slot *next; // the slot enqueued after this one onto the same queue (a hint)
} qt_slot_t;

/// A sync item's context, on the caller's stack: the queue it holds while it runs is known.
typedef struct { void *work; void *ctx; uint64_t id; void *queue; } qt_sync_slot_t;

/// A thread keeps up to two batches of free slots: the list it takes from and gives back to,
/// and one full spare. When the list fills a batch, it becomes the spare or, when there is one
/// already, goes to the shared pool (a thread that only runs items must not hoard what a
/// thread that only submits needs). No walk: a batch is handed over whole.
#define QT_SLOT_BATCH 1024

QT_HIDDEN qt_slot_t *slot_refill(qt_thread_t *t);
QT_HIDDEN void slot_spill(qt_thread_t *t);
QT_HIDDEN void slot_thread_exit(qt_thread_t *t);
QT_HIDDEN void slot_after_fork_child(void);

/// A free slot, or NULL when there is no memory for one.
static inline qt_slot_t *slot_alloc(qt_thread_t *t) {
    qt_slot_t *s = t->slot_free;
    if (QT_UNLIKELY(s == NULL)) return slot_refill(t);
    t->slot_free = s->work;
    t->slot_free_count--;
    return s;
}

/// Links `s` behind the slot last enqueued onto the queue just noted. Items of a queue mostly
/// run in the order they were enqueued, so the trampoline running one prefetches the next
/// one's slot, which is otherwise a cache miss when many items are pending (their slots were
/// written long ago). Only a hint: slots are never freed, and a stale link (a slot reused, a
/// race between submitters) only prefetches the wrong line.
static inline void slot_chain(qt_thread_t *t, void *q, qt_slot_t *s) {
    __atomic_store_n(&s->next, NULL, __ATOMIC_RELAXED);
    if (QT_UNLIKELY(q != t->last_noted_queue || t->last_noted_entry == NULL)) return;
    // A load and a store, not an exchange: a locked instruction would wait for this thread's
    // pending stores (trace records, the slot) to drain. Two submitters racing here lose a
    // link, i.e. one prefetch. The entry may have gone to another queue since it was noted.
    qt_known_queue_t *e = t->last_noted_entry;
    if (QT_UNLIKELY(__atomic_load_n(&e->queue, __ATOMIC_RELAXED) != (uintptr_t)q)) return;
    qt_slot_t *prev = __atomic_load_n((qt_slot_t **)&e->last, __ATOMIC_RELAXED);
    __atomic_store_n(&e->last, (void *)s, __ATOMIC_RELAXED);
    if (prev) __atomic_store_n(&prev->next, s, __ATOMIC_RELAXED);
}

static inline void slot_release(qt_thread_t *t, qt_slot_t *s) {
    s->work = t->slot_free;
    t->slot_free = s;
    if (QT_UNLIKELY(++t->slot_free_count == QT_SLOT_BATCH)) slot_spill(t);
}

#define QT_ID_MASK ((1ull << 56) - 1)

static inline void held_push(qt_thread_t *t, void *q) {
    if (t->held_count < QT_HELD_MAX) t->held[t->held_count] = q;
    t->held_count++;
}

static inline void held_pop(qt_thread_t *t) { t->held_count--; }

/// A held entry whose queue is libdispatch's current queue, asked only when a sync needs it
/// (most items never sync): see resolve_held_top.
#define QT_HELD_CURRENT ((void *)1)

// The trampolines the real `_f` functions call with the shim's context (shim_blocks.c).
QT_HIDDEN void tramp_async_block(void *p);
QT_HIDDEN void tramp_async_fn(void *p);
QT_HIDDEN void tramp_sync_block(void *p);
QT_HIDDEN void tramp_sync_fn(void *p);
QT_HIDDEN void tramp_tagged_async(void *block);
QT_HIDDEN void tramp_tagged_barrier_async(void *block);
QT_HIDDEN void tramp_tagged_after(void *block);
QT_HIDDEN void tramp_tagged_group_async(void *block);
QT_HIDDEN void tramp_tagged_group_notify(void *block);
/// The item runs but its slot could not be allocated: nothing to record.
QT_HIDDEN void tramp_untraced_block(void *block);

// ---- plain blocks: the heap copy carries the item id ----
// libdispatch would copy a submitted block to the heap anyway (that is the malloc of plain
// async). The shim makes that copy itself, submits it as the `_f` context, and stores the
// item id in the copy's `Block_layout.reserved` field, which the Blocks runtime never reads
// or writes (_Block_copy bit-copies it, _Block_release ignores it; swift-corelibs-libdispatch
// src/BlocksRuntime/runtime.c). The kind is the trampoline's, and the queue the item runs on
// is libdispatch's current queue (asked only at sync time), so the item needs no other state.

/// 1 when `copy` (= _Block_copy(original)) now carries `id` and may be submitted as the context.
/// A global block (shared by every submission), an id wider than 32 bits, or a `reserved`
/// already in use (the same heap block pending twice, or a producer that uses the field)
/// cannot: those items take the slot path.
static inline int tag_block(const void *original, void *copy, uint64_t id) {
    struct qt_block_layout *c = copy;
    if (QT_UNLIKELY(c == NULL || id > UINT32_MAX)) return 0;
    if (QT_LIKELY(copy != original)) {
        // A fresh copy of a stack block: nobody else holds it yet.
        if (QT_UNLIKELY(c->reserved != 0)) return 0;
        c->reserved = (int)(uint32_t)id;
        return 1;
    }
    // A heap block that the caller also holds (it may be submitted again concurrently).
    if ((c->flags & (QT_BLOCK_NEEDS_FREE | QT_BLOCK_IS_GLOBAL)) != QT_BLOCK_NEEDS_FREE) return 0;
    int expected = 0;
    return __atomic_compare_exchange_n(&c->reserved, &expected, (int)(uint32_t)id, 0,
                                       __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static inline qt_fn_t tagged_trampoline(unsigned kind) {
    switch (kind) {
    case QT_KIND_BARRIER_ASYNC: return tramp_tagged_barrier_async;
    case QT_KIND_AFTER: return tramp_tagged_after;
    case QT_KIND_GROUP_ASYNC: return tramp_tagged_group_async;
    case QT_KIND_GROUP_NOTIFY: return tramp_tagged_group_notify;
    default: return tramp_tagged_async;
    }
}

static inline int is_workitem(void *block) {
    return block && g_special_invoke && ((struct qt_block_layout *)block)->invoke == g_special_invoke;
}

/// ENQUEUE of a DispatchWorkItem: its id was given when it was created (shim_queues.c).
/// Its site is the one of its body where it was created (dispatch_block_create).
QT_HIDDEN void enqueue_workitem(qt_thread_t *t, unsigned kind, unsigned flags8, void *q, void *block, uint64_t extra);

// ---- submission ----

/// Records an asynchronous item's ENQUEUE and returns the context to hand to the real `_f`
/// function with `*trampoline`. A plain block's own heap copy carries the id (no allocation,
/// no slot); functions, and blocks that cannot carry it, take a context slot.
static inline __attribute__((always_inline)) void *enqueue_async(qt_thread_t *t, unsigned kind, unsigned flags8, void *q, void *work, void *ctx,
                                  int is_block, uint64_t extra, void *ra, qt_fn_t *trampoline) {
    uint64_t id = qt_next_id(t);
    note_queue(t, q);
    if (QT_UNLIKELY(flags8 & QT_EF_CONCURRENCY) && !is_block) {
        // A Swift Concurrency job: its task and the async function it resumes.
        qt_job_t job;
        uint32_t site = qt_job_site(t, ctx, (uintptr_t)ra, &job);
        qt_rec_enqueue_site(t, kind, flags8, id, q, extra, site);
        qt_rec_job(t, id, ctx, &job);
    } else {
        uint32_t site = is_block ? qt_block_site(t, work, ra) : qt_function_site(t, work, ra);
        qt_rec_enqueue_site(t, kind, flags8, id, q, extra, site);
    }
    if (is_block) {
        void *copy = _Block_copy(work);
        if (QT_LIKELY(tag_block(work, copy, id))) { *trampoline = tagged_trampoline(kind); return copy; }
        work = copy;
    }
    qt_slot_t *s = slot_alloc(t);
    if (QT_UNLIKELY(!s)) {
        // No memory for a slot: the item still runs, unrecorded, and is counted as dropped.
        qt_count_dropped(QT_START);
        qt_count_dropped(QT_END);
        *trampoline = is_block ? tramp_untraced_block : (qt_fn_t)work;
        return is_block ? work : ctx;
    }
    s->work = work;
    s->ctx = ctx;
    s->id = id | ((uint64_t)kind << 56);
    slot_chain(t, q, s);
    *trampoline = is_block ? tramp_async_block : tramp_async_fn;
    return s;
}

// ---- function items without a slot (shim_stubs.c) ----
// dispatch_async_f's context passes through untouched; the function is replaced by a stub,
// one of a static table, which knows its index and runs the function the table maps it to.

#define QT_STUB_COUNT 256 /* the stub is ENQUEUE_F's flags8 */
#define QT_STUB_MAP_SIZE 1024
/// A function's stub (index + 1; 0 while its first user publishes it; QT_STUB_NONE: the table was full).
typedef struct { uintptr_t fn; uint32_t stub; } qt_stub_entry_t;
#define QT_STUB_NONE UINT32_MAX

QT_HIDDEN extern qt_stub_entry_t g_stub_map[QT_STUB_MAP_SIZE];
QT_HIDDEN extern const qt_fn_t g_stubs[QT_STUB_COUNT];
QT_HIDDEN uint32_t qt_stub_assign(uintptr_t fn);
/// Whether function items go without a slot: only with QTRACE_SLOTLESS=1 (off by default: the
/// reader pays ~375 ns per such item to pair it, more than the ~10-20 ns the program saves;
/// docs/performance.md, "Full rate, third pass").
QT_HIDDEN extern int g_slotless_enabled;
QT_HIDDEN void qt_stubs_init_from_env(void);

/// The stub index + 1 of `fn`, or 0 when it has none (yet): the item takes the slot path.
/// Lock-free: one probe of a small table when the function was seen before.
static inline uint32_t qt_stub_of(qt_fn_t fn) {
    qt_stub_entry_t *e = &g_stub_map[qt_hash((uintptr_t)fn, QT_STUB_MAP_SIZE)];
    if (QT_LIKELY(__atomic_load_n(&e->fn, __ATOMIC_RELAXED) == (uintptr_t)fn)) {
        uint32_t stub = __atomic_load_n(&e->stub, __ATOMIC_ACQUIRE);
        return stub == QT_STUB_NONE ? 0 : stub;
    }
    return qt_stub_assign((uintptr_t)fn);
}

// ---- hand-made wrapper blocks (DispatchWorkItem bodies, source and I/O handlers) ----

typedef struct qt_wrap {
    void *isa;
    int flags;
    int reserved;
    void *invoke;
    const void *descriptor;
    void *inner;        // the user's block (retained by the copy helper) or NULL
    qt_fn_t fn;         // or the user's function (_f handlers)
    void *object;       // source, channel, queue
    uint64_t id;
    uint32_t which;
} qt_wrap_t;

typedef struct { unsigned long reserved, size; void *copy, *dispose; } qt_wrap_descriptor_t;
QT_HIDDEN extern const qt_wrap_descriptor_t g_wrap_descriptor;  // shim_blocks.c

/// A stack block; libdispatch copies it to the heap (retaining `inner`) when it keeps it.
static inline qt_wrap_t make_wrap(void *invoke, void *inner, qt_fn_t fn, void *object, uint64_t id, uint32_t which) {
    qt_wrap_t w = { (void *)_NSConcreteStackBlock, QT_BLOCK_HAS_COPY_DISPOSE, 0, invoke, &g_wrap_descriptor,
                    inner, fn, object, id, which };
    return w;
}

/// This copy's own dispatch_async (a hidden alias, defined beside dispatch_async in shim_submit.c).
QT_HIDDEN void qt_own_dispatch_async(void *, void *);

#endif
