// The interposer: qtrace's definitions of libdispatch's exported C API. Each forwards to the
// real function (dlsym RTLD_NEXT) and records events. Preloaded, it sees every call of an
// unmodified program; linked into an app (QTrace library), the executable's definitions win.
//
// Rules that keep the traced program's behaviour unchanged (../shared/notes/platform-facts.md):
// - libdispatch calls its own exported functions through the PLT: a call whose return
//   address is inside libdispatch.so, or made while the shim itself is calling into
//   libdispatch (qt_tls.depth > 0), is internal and passed through unrecorded.
// - Work items are re-submitted through the `_f` variants, so no allocation is added per
//   item: a plain block's own heap copy is the context and carries the item id; functions
//   take a context slot from a ring. Blocks made by dispatch_block_create (DispatchWorkItem,
//   which carry barrier/QoS flags libdispatch reads from the block) are never re-wrapped:
//   their inner block is wrapped when they are created instead.
// - Nothing here references libdispatch or BlocksRuntime symbols directly (weak or dlsym):
//   every process that inherits LD_PRELOAD loads the shim, Dispatch user or not.
#define _GNU_SOURCE
#include "recorder.h"
#include "qtrace_shim.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

// ---- the real functions ----

static struct {
    void (*async)(void *, void *);
    void (*async_f)(void *, void *, qt_fn_t);
    void (*sync)(void *, void *);
    void (*sync_f)(void *, void *, qt_fn_t);
    void (*barrier_async)(void *, void *);
    void (*barrier_async_f)(void *, void *, qt_fn_t);
    void (*barrier_sync)(void *, void *);
    void (*barrier_sync_f)(void *, void *, qt_fn_t);
    void (*async_and_wait)(void *, void *);
    void (*async_and_wait_f)(void *, void *, qt_fn_t);
    void (*barrier_async_and_wait)(void *, void *);
    void (*barrier_async_and_wait_f)(void *, void *, qt_fn_t);
    void (*after)(uint64_t, void *, void *);
    void (*after_f)(uint64_t, void *, void *, qt_fn_t);
    void (*apply)(size_t, void *, void *);
    void (*apply_f)(size_t, void *, void *, qt_apply_fn_t);
    void (*group_async)(void *, void *, void *);
    void (*group_async_f)(void *, void *, void *, qt_fn_t);
    void (*group_notify)(void *, void *, void *);
    void (*group_notify_f)(void *, void *, void *, qt_fn_t);
    void *(*group_create)(void);
    void (*group_enter)(void *);
    void (*group_leave)(void *);
    long (*group_wait)(void *, uint64_t);
    void *(*semaphore_create)(long);
    long (*semaphore_wait)(void *, uint64_t);
    long (*semaphore_signal)(void *);
    void *(*queue_create)(const char *, void *);
    void *(*queue_create_with_target)(const char *, void *, void *);
    void *(*attr_make_with_qos_class)(void *, unsigned, int);
    void *(*attr_make_initially_inactive)(void *);
    const char *(*queue_get_label)(void *);
    void *(*get_current_queue)(void);
    unsigned (*queue_get_qos_class)(void *, int *);
    void *(*get_global_queue)(intptr_t, uintptr_t);
    void (*set_target_queue)(void *, void *);
    void (*suspend)(void *);
    void (*resume)(void *);
    void (*activate)(void *);
    void *(*block_create)(unsigned long, void *);
    void *(*block_create_with_qos_class)(unsigned long, unsigned, int, void *);
    void (*block_perform)(unsigned long, void *);
    void (*block_notify)(void *, void *, void *);
    void *(*source_create)(const void *, uintptr_t, uintptr_t, void *);
    void (*source_set_timer)(void *, uint64_t, uint64_t, uint64_t);
    void (*source_set_event_handler)(void *, void *);
    void (*source_set_event_handler_f)(void *, qt_fn_t);
    void (*source_set_cancel_handler)(void *, void *);
    void (*source_set_cancel_handler_f)(void *, qt_fn_t);
    void (*source_set_registration_handler)(void *, void *);
    void (*source_set_registration_handler_f)(void *, qt_fn_t);
    void (*source_cancel)(void *);
    void (*source_merge_data)(void *, uintptr_t);
    uintptr_t (*source_get_data)(void *);
    void *(*get_context)(void *);
    void *(*io_create)(unsigned long, int, void *, void *);
    void *(*io_create_with_path)(unsigned long, const char *, int, unsigned, void *, void *);
    void *(*io_create_with_io)(unsigned long, void *, void *, void *);
    void (*io_read)(void *, int64_t, size_t, void *, void *);
    void (*io_write)(void *, int64_t, void *, void *, void *);
    void (*io_barrier)(void *, void *);
    void (*io_close)(void *, unsigned long);
    void (*read)(int, size_t, void *, void *);
    void (*write)(int, void *, void *, void *);
    size_t (*data_get_size)(void *);
    int (*pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    int (*pthread_setname_np)(pthread_t, const char *);
} real;

static uintptr_t g_dispatch_lo, g_dispatch_hi;      // libdispatch.so's code
static uintptr_t g_concurrency_lo, g_concurrency_hi; // libswift_Concurrency.so's code
static void *g_special_invoke;                       // invoke function of DispatchWorkItem blocks
static void *g_main_queue;
static void *g_attr_concurrent;
static const void *g_source_types[9];
static pthread_key_t g_thread_exit_key;
static pthread_once_t g_resolve_once = PTHREAD_ONCE_INIT;

#define RESOLVE(field, name) real.field = (__typeof__(real.field))dlsym(RTLD_NEXT, name)

static int find_code_ranges(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size; (void)data;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    uintptr_t *lo = NULL, *hi = NULL;
    if (strstr(name, "/libdispatch.so")) { lo = &g_dispatch_lo; hi = &g_dispatch_hi; }
    else if (strstr(name, "/libswift_Concurrency.so")) { lo = &g_concurrency_lo; hi = &g_concurrency_hi; }
    if (!lo) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
        if (*lo == 0 || start < *lo) *lo = start;
        if (end > *hi) *hi = end;
    }
    return 0;
}

static const char *const g_source_type_names[9] = {
    NULL, "_dispatch_source_type_timer", "_dispatch_source_type_read", "_dispatch_source_type_write",
    "_dispatch_source_type_signal", "_dispatch_source_type_data_add", "_dispatch_source_type_data_or",
    "_dispatch_source_type_data_replace", "_dispatch_source_type_interval",
};

static void resolve_all(void) {
    RESOLVE(async, "dispatch_async"); RESOLVE(async_f, "dispatch_async_f");
    RESOLVE(sync, "dispatch_sync"); RESOLVE(sync_f, "dispatch_sync_f");
    RESOLVE(barrier_async, "dispatch_barrier_async"); RESOLVE(barrier_async_f, "dispatch_barrier_async_f");
    RESOLVE(barrier_sync, "dispatch_barrier_sync"); RESOLVE(barrier_sync_f, "dispatch_barrier_sync_f");
    RESOLVE(async_and_wait, "dispatch_async_and_wait"); RESOLVE(async_and_wait_f, "dispatch_async_and_wait_f");
    RESOLVE(barrier_async_and_wait, "dispatch_barrier_async_and_wait");
    RESOLVE(barrier_async_and_wait_f, "dispatch_barrier_async_and_wait_f");
    RESOLVE(after, "dispatch_after"); RESOLVE(after_f, "dispatch_after_f");
    RESOLVE(apply, "dispatch_apply"); RESOLVE(apply_f, "dispatch_apply_f");
    RESOLVE(group_async, "dispatch_group_async"); RESOLVE(group_async_f, "dispatch_group_async_f");
    RESOLVE(group_notify, "dispatch_group_notify"); RESOLVE(group_notify_f, "dispatch_group_notify_f");
    RESOLVE(group_create, "dispatch_group_create"); RESOLVE(group_enter, "dispatch_group_enter");
    RESOLVE(group_leave, "dispatch_group_leave"); RESOLVE(group_wait, "dispatch_group_wait");
    RESOLVE(semaphore_create, "dispatch_semaphore_create");
    RESOLVE(semaphore_wait, "dispatch_semaphore_wait");
    RESOLVE(semaphore_signal, "dispatch_semaphore_signal");
    RESOLVE(queue_create, "dispatch_queue_create");
    RESOLVE(queue_create_with_target, "dispatch_queue_create_with_target");
    RESOLVE(attr_make_with_qos_class, "dispatch_queue_attr_make_with_qos_class");
    RESOLVE(attr_make_initially_inactive, "dispatch_queue_attr_make_initially_inactive");
    RESOLVE(queue_get_label, "dispatch_queue_get_label");
    RESOLVE(get_current_queue, "dispatch_get_current_queue");
    RESOLVE(queue_get_qos_class, "dispatch_queue_get_qos_class");
    RESOLVE(get_global_queue, "dispatch_get_global_queue");
    RESOLVE(set_target_queue, "dispatch_set_target_queue");
    RESOLVE(suspend, "dispatch_suspend"); RESOLVE(resume, "dispatch_resume");
    RESOLVE(activate, "dispatch_activate");
    RESOLVE(block_create, "dispatch_block_create");
    RESOLVE(block_create_with_qos_class, "dispatch_block_create_with_qos_class");
    RESOLVE(block_perform, "dispatch_block_perform");
    RESOLVE(block_notify, "dispatch_block_notify");
    RESOLVE(source_create, "dispatch_source_create");
    RESOLVE(source_set_timer, "dispatch_source_set_timer");
    RESOLVE(source_set_event_handler, "dispatch_source_set_event_handler");
    RESOLVE(source_set_event_handler_f, "dispatch_source_set_event_handler_f");
    RESOLVE(source_set_cancel_handler, "dispatch_source_set_cancel_handler");
    RESOLVE(source_set_cancel_handler_f, "dispatch_source_set_cancel_handler_f");
    RESOLVE(source_set_registration_handler, "dispatch_source_set_registration_handler");
    RESOLVE(source_set_registration_handler_f, "dispatch_source_set_registration_handler_f");
    RESOLVE(source_cancel, "dispatch_source_cancel");
    RESOLVE(source_merge_data, "dispatch_source_merge_data");
    RESOLVE(source_get_data, "dispatch_source_get_data");
    RESOLVE(get_context, "dispatch_get_context");
    RESOLVE(io_create, "dispatch_io_create");
    RESOLVE(io_create_with_path, "dispatch_io_create_with_path");
    RESOLVE(io_create_with_io, "dispatch_io_create_with_io");
    RESOLVE(io_read, "dispatch_io_read"); RESOLVE(io_write, "dispatch_io_write");
    RESOLVE(io_barrier, "dispatch_io_barrier"); RESOLVE(io_close, "dispatch_io_close");
    RESOLVE(read, "dispatch_read"); RESOLVE(write, "dispatch_write");
    RESOLVE(data_get_size, "dispatch_data_get_size");
    RESOLVE(pthread_create, "pthread_create");
    RESOLVE(pthread_setname_np, "pthread_setname_np");

    void **special = dlsym(RTLD_DEFAULT, "_dispatch_block_special_invoke");
    g_special_invoke = special ? *special : NULL;
    g_main_queue = dlsym(RTLD_DEFAULT, "_dispatch_main_q");
    g_attr_concurrent = dlsym(RTLD_DEFAULT, "_dispatch_queue_attr_concurrent");
    for (int i = 1; i < 9; i++) g_source_types[i] = dlsym(RTLD_DEFAULT, g_source_type_names[i]);
    dl_iterate_phdr(find_code_ranges, NULL);
    qt_recorder_set_main_queue((uint64_t)(uintptr_t)g_main_queue);
}

/// Resolves the real functions once, however early the first call comes.
static inline void qt_resolve(void) {
    if (QT_UNLIKELY(real.async == NULL)) pthread_once(&g_resolve_once, resolve_all);
}

/// A user call is recorded; libdispatch's calls to itself and the shim's own are not.
static inline int qt_is_user_call(qt_thread_t *t, void *ra) {
    uintptr_t a = (uintptr_t)ra;
    return qt_enabled && t->depth == 0 && !(a >= g_dispatch_lo && a < g_dispatch_hi);
}

static inline unsigned qt_caller_flags(void *ra) {
    uintptr_t a = (uintptr_t)ra;
    return (a >= g_concurrency_lo && a < g_concurrency_hi) ? QT_EF_CONCURRENCY : 0;
}

// ---- object tables: pointer -> facts, lock-free open addressing ----

typedef struct { uintptr_t key; uint64_t a, b; } qt_entry_t;

#define QT_TABLE_SIZE 16384
static qt_entry_t g_queues[QT_TABLE_SIZE];     // queue -> (attrs | QT_Q_KNOWN, target)
static qt_entry_t g_attrs[256];                // queue attr -> attrs bits
static qt_entry_t g_workitems[QT_TABLE_SIZE];  // DispatchWorkItem block -> (item id, block flags)

#define QT_Q_CONCURRENT 1u
#define QT_Q_INACTIVE 2u
#define QT_Q_GLOBAL (1u << 30)
#define QT_Q_KNOWN (1ull << 40)

static inline size_t qt_hash(uintptr_t key, size_t size) {
    return (size_t)((key >> 4) * 0x9E3779B97F4A7C15ull >> 20) & (size - 1);
}

static qt_entry_t *table_find(qt_entry_t *tab, size_t size, uintptr_t key, int insert) {
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

static uint32_t attr_bits(void *attr) {
    if (attr == NULL) return 0;
    if (attr == g_attr_concurrent) return QT_Q_CONCURRENT;
    qt_entry_t *e = table_find(g_attrs, 256, (uintptr_t)attr, 0);
    return e ? (uint32_t)e->a : 0;
}

static void remember_attr(void *result, uint32_t bits) {
    qt_entry_t *e = table_find(g_attrs, 256, (uintptr_t)result, 1);
    if (e) e->a = bits;
}

static const char *label_of(void *q) {
    const char *l = q && real.queue_get_label ? real.queue_get_label(q) : NULL;
    return l ? l : "";
}

/// Records QUEUE_INFO the first time a queue that the shim did not see created is used.
static void note_queue_slow(qt_thread_t *t, void *q) {
    qt_entry_t *e = table_find(g_queues, QT_TABLE_SIZE, (uintptr_t)q, 1);
    if (!e || (e->a & QT_Q_KNOWN)) return;
    const char *label = label_of(q);
    uint32_t kind = 3, bits = 0;
    if (q == g_main_queue) kind = 1;
    else if (strncmp(label, "com.apple.root.", 15) == 0) { kind = 2; bits = QT_Q_CONCURRENT | QT_Q_GLOBAL; }
    int relpri = 0;
    unsigned qos = real.queue_get_qos_class ? real.queue_get_qos_class(q, &relpri) : 0;
    e->b = 0;
    e->a = bits | QT_Q_KNOWN;
    uint64_t words[1] = { (uint64_t)(uintptr_t)q };
    qt_rec_string(t, QT_QUEUE_INFO, kind | ((qos & 0xff) << 8), words, 1, label);
}

static inline void note_queue(qt_thread_t *t, void *q) {
    // Submitters usually target the same queue again and again: skip the table lookup then.
    if (QT_LIKELY(q == t->last_noted_queue && q != NULL)) return;
    qt_entry_t *e = table_find(g_queues, QT_TABLE_SIZE, (uintptr_t)q, 0);
    if (QT_LIKELY(e && (e->a & QT_Q_KNOWN))) { t->last_noted_queue = q; return; }
    if (q) note_queue_slow(t, q);
}

// ---- context slots: a ring instead of malloc per item ----

typedef struct {
    void *work;         // block or function
    void *ctx;          // function context
    uint64_t id;        // item id | kind << 56; 0 = free slot
    void *queue;
} qt_slot_t;

#define QT_RING_BITS 20
#define QT_RING_SIZE (1u << QT_RING_BITS)
static qt_slot_t *g_ring;

static qt_slot_t *slot_alloc(uint64_t id) {
    if (QT_LIKELY(g_ring != NULL)) {
        qt_slot_t *s = &g_ring[id & (QT_RING_SIZE - 1)];
        if (QT_LIKELY(__atomic_load_n(&s->id, __ATOMIC_ACQUIRE) == 0)) return s;
    }
    return malloc(sizeof(qt_slot_t));  // the ring slot is still taken by an old pending item
}

static inline void slot_take(qt_slot_t *s, void **work, void **ctx, uint64_t *id, void **queue) {
    *work = s->work; *ctx = s->ctx; *id = s->id; *queue = s->queue;
    if (QT_LIKELY((uintptr_t)s - (uintptr_t)g_ring < (uintptr_t)QT_RING_SIZE * sizeof(qt_slot_t)))
        __atomic_store_n(&s->id, 0, __ATOMIC_RELEASE);
    else
        free(s);
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

/// Runs a work item on this thread between START and END records.
static inline __attribute__((always_inline)) void run_item(qt_thread_t *t, uint64_t tagged_id, void *queue, void *work, void *ctx, int is_block) {
    int saved_depth = t->depth;
    t->depth = 0;
    qt_rec_start(t, (unsigned)(tagged_id >> 56), tagged_id & QT_ID_MASK);
    held_push(t, queue);
    if (is_block) qt_invoke_block(work); else ((qt_fn_t)work)(ctx);
    held_pop(t);
    qt_rec_end(t, tagged_id & QT_ID_MASK);
    t->depth = saved_depth;
}

static void tramp_async_block(void *p) {
    void *work, *ctx, *queue; uint64_t id;
    slot_take(p, &work, &ctx, &id, &queue);
    run_item(&qt_tls, id, queue, work, ctx, 1);
    _Block_release(work);
}

static void tramp_async_fn(void *p) {
    void *work, *ctx, *queue; uint64_t id;
    slot_take(p, &work, &ctx, &id, &queue);
    run_item(&qt_tls, id, queue, work, ctx, 0);
}

static void tramp_sync_block(void *p) {
    qt_slot_t *s = p;
    run_item(&qt_tls, s->id, s->queue, s->work, NULL, 1);
}

static void tramp_sync_fn(void *p) {
    qt_slot_t *s = p;
    run_item(&qt_tls, s->id, s->queue, s->work, s->ctx, 0);
}

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

static inline __attribute__((always_inline)) void run_tagged_block(void *block, unsigned kind) {
    struct qt_block_layout *b = block;
    uint64_t id = (uint32_t)__atomic_load_n(&b->reserved, __ATOMIC_RELAXED);
    // Free the field before running: the block may be submitted again from its own body.
    __atomic_store_n(&b->reserved, 0, __ATOMIC_RELAXED);
    run_item(&qt_tls, id | ((uint64_t)kind << 56), QT_HELD_CURRENT, block, NULL, 1);
    _Block_release(block);
}

#define TAGGED_TRAMPOLINE(name, kind) static void name(void *block) { run_tagged_block(block, kind); }
TAGGED_TRAMPOLINE(tramp_tagged_async, QT_KIND_ASYNC)
TAGGED_TRAMPOLINE(tramp_tagged_barrier_async, QT_KIND_BARRIER_ASYNC)
TAGGED_TRAMPOLINE(tramp_tagged_after, QT_KIND_AFTER)
TAGGED_TRAMPOLINE(tramp_tagged_group_async, QT_KIND_GROUP_ASYNC)
TAGGED_TRAMPOLINE(tramp_tagged_group_notify, QT_KIND_GROUP_NOTIFY)

static inline qt_fn_t tagged_trampoline(unsigned kind) {
    switch (kind) {
    case QT_KIND_BARRIER_ASYNC: return tramp_tagged_barrier_async;
    case QT_KIND_AFTER: return tramp_tagged_after;
    case QT_KIND_GROUP_ASYNC: return tramp_tagged_group_async;
    case QT_KIND_GROUP_NOTIFY: return tramp_tagged_group_notify;
    default: return tramp_tagged_async;
    }
}

/// The item runs but its slot could not be allocated: nothing to record.
static void tramp_untraced_block(void *block) {
    qt_invoke_block(block);
    _Block_release(block);
}

static inline int is_workitem(void *block) {
    return block && g_special_invoke && ((struct qt_block_layout *)block)->invoke == g_special_invoke;
}

/// ENQUEUE of a DispatchWorkItem: its id was given when it was created.
static void enqueue_workitem(qt_thread_t *t, unsigned kind, unsigned flags8, void *q, void *block, uint64_t extra) {
    qt_entry_t *e = table_find(g_workitems, QT_TABLE_SIZE, (uintptr_t)block, 0);
    uint64_t id = e ? e->a : 0;
    if (e && (e->b & 1)) flags8 |= QT_EF_BARRIER;  // DISPATCH_BLOCK_BARRIER
    note_queue(t, q);
    qt_rec3(t, QT_ENQUEUE, flags8 | QT_EF_WORKITEM, kind, id, (uint64_t)(uintptr_t)q, extra);
}

// ---- deadlock detection: sync onto a serial queue this thread is already running ----

static void *target_of(void *q) {
    qt_entry_t *e = table_find(g_queues, QT_TABLE_SIZE, (uintptr_t)q, 0);
    return e ? (void *)(uintptr_t)e->b : NULL;
}

static int is_serial(void *q) {
    if (q == g_main_queue) return 1;
    qt_entry_t *e = table_find(g_queues, QT_TABLE_SIZE, (uintptr_t)q, 0);
    return e && (e->a & QT_Q_KNOWN) && !(e->a & QT_Q_CONCURRENT);
}

static int chain_contains(void *from, void *q) {
    for (int i = 0; from && i < 16; i++, from = target_of(from))
        if (from == q) return 1;
    return 0;
}

static void report_deadlock(qt_thread_t *t, uint32_t kind, void *q, void *held) {
    qt_rec2(t, QT_DEADLOCK, 0, kind, (uint64_t)(uintptr_t)q, (uint64_t)(uintptr_t)held);
    char msg[640];
    int n = snprintf(msg, sizeof msg,
        "qtrace: deadlock: thread %d calls %s onto queue \"%.200s\" while running an item of \"%.200s\"; "
        "it will wait forever (use async, or do the work inline)\n",
        (int)(t->tid ? t->tid : qt_gettid()), kind == 2 ? "dispatch_apply" : "dispatch_sync", label_of(q),
        label_of(held));
    if (n > 0) { ssize_t w = write(2, msg, (size_t)(n < (int)sizeof msg ? n : (int)sizeof msg - 1)); (void)w; }
}

/// The innermost running item's queue is libdispatch's current queue while its body runs, so
/// a QT_HELD_CURRENT on top can be resolved now. One below the top is only left by a nested
/// drain (an item running a run loop that drains another queue): its queue is unknown.
static void resolve_held_top(qt_thread_t *t, int held) {
    if (t->held[held - 1] == QT_HELD_CURRENT)
        t->held[held - 1] = real.get_current_queue ? real.get_current_queue() : NULL;
}

/// A sync onto q waits for q's serial ancestors; if this thread holds one of them, that wait
/// can never end.
static void check_deadlock(qt_thread_t *t, void *q, uint32_t kind, int barrier) {
    int held = t->held_count < QT_HELD_MAX ? t->held_count : QT_HELD_MAX;
    if (held == 0) return;
    if (held == t->held_count) resolve_held_top(t, held);
    for (int i = 0; q && i < 16; i++) {
        for (int h = held - 1; h >= 0; h--) {
            void *hq = t->held[h];
            if (hq == QT_HELD_CURRENT) continue;
            int blocks = (is_serial(q) || (barrier && i == 0)) && chain_contains(hq, q);
            if (blocks) { report_deadlock(t, kind, i == 0 ? q : q, hq); return; }
        }
        void *next = target_of(q);
        if (next == q) break;
        q = next;
    }
}

// ---- submission ----

/// Records an asynchronous item's ENQUEUE and returns the context to hand to the real `_f`
/// function with `*trampoline`. A plain block's own heap copy carries the id (no allocation,
/// no slot); functions, and blocks that cannot carry it, take a context slot.
static inline __attribute__((always_inline)) void *enqueue_async(qt_thread_t *t, unsigned kind, unsigned flags8, void *q, void *work, void *ctx,
                                  int is_block, uint64_t extra, qt_fn_t *trampoline) {
    uint64_t id = qt_next_id(t);
    note_queue(t, q);
    qt_rec_enqueue(t, kind, flags8, id, q, extra);
    if (is_block) {
        void *copy = _Block_copy(work);
        if (QT_LIKELY(tag_block(work, copy, id))) { *trampoline = tagged_trampoline(kind); return copy; }
        work = copy;
    }
    qt_slot_t *s = slot_alloc(id);
    if (QT_UNLIKELY(!s)) {
        // No memory for a slot: the item still runs, unrecorded, and is counted as dropped.
        qt_count_dropped(QT_START);
        qt_count_dropped(QT_END);
        *trampoline = is_block ? tramp_untraced_block : (qt_fn_t)work;
        return is_block ? work : ctx;
    }
    s->work = work;
    s->ctx = ctx;
    s->queue = q;
    __atomic_store_n(&s->id, id | ((uint64_t)kind << 56), __ATOMIC_RELAXED);
    *trampoline = is_block ? tramp_async_block : tramp_async_fn;
    return s;
}

static inline __attribute__((always_inline)) void submit_async(qt_thread_t *t, unsigned kind, unsigned flags8, void *q, void *work, void *ctx,
                                int is_block, uint64_t extra, void (*real_f)(void *, void *, qt_fn_t)) {
    qt_fn_t trampoline;
    void *c = enqueue_async(t, kind, flags8, q, work, ctx, is_block, extra, &trampoline);
    t->depth++;
    real_f(q, c, trampoline);
    t->depth--;
}

static inline void submit_sync(qt_thread_t *t, unsigned kind, unsigned flags8, void *q, void *work, void *ctx,
                               int is_block, void (*real_f)(void *, void *, qt_fn_t)) {
    uint64_t id = qt_next_id(t);
    qt_slot_t s = { work, ctx, id | ((uint64_t)kind << 56), q };
    note_queue(t, q);
    check_deadlock(t, q, 1, kind == QT_KIND_BARRIER_SYNC || kind == QT_KIND_BARRIER_ASYNC_AND_WAIT);
    qt_rec_enqueue(t, kind, flags8, id, q, 0);
    t->depth++;
    real_f(q, &s, is_block ? tramp_sync_block : tramp_sync_fn);
    t->depth--;
}

#define QT_PROLOGUE(fn)                 \
    qt_resolve();                       \
    qt_thread_t *t = &qt_tls;           \
    void *ra = __builtin_return_address(0); \
    (void)ra;

#define ASYNC_BLOCK_API(name, field, field_f, kind, flags8)                              \
    void name(void *q, void *block) {                                                    \
        QT_PROLOGUE(name)                                                                \
        if (!qt_is_user_call(t, ra)) { real.field(q, block); return; }                  \
        if (is_workitem(block)) {                                                        \
            enqueue_workitem(t, kind, flags8, q, block, 0);                              \
            t->depth++; real.field(q, block); t->depth--;                                \
            return;                                                                      \
        }                                                                                \
        submit_async(t, kind, flags8 | qt_caller_flags(ra), q, block, NULL, 1, 0, real.field_f); \
    }

#define ASYNC_FN_API(name, field_f, kind, flags8)                                        \
    void name(void *q, void *ctx, qt_fn_t fn) {                                          \
        QT_PROLOGUE(name)                                                                \
        if (!qt_is_user_call(t, ra)) { real.field_f(q, ctx, fn); return; }              \
        submit_async(t, kind, flags8 | QT_EF_FUNCTION | qt_caller_flags(ra), q, (void *)fn, ctx, 0, 0, real.field_f); \
    }

#define SYNC_BLOCK_API(name, field, field_f, kind, flags8)                               \
    void name(void *q, void *block) {                                                    \
        QT_PROLOGUE(name)                                                                \
        if (!qt_is_user_call(t, ra)) { real.field(q, block); return; }                  \
        if (is_workitem(block)) {                                                        \
            check_deadlock(t, q, 1, (flags8) & QT_EF_BARRIER);                           \
            enqueue_workitem(t, kind, flags8, q, block, 0);                              \
            t->depth++; real.field(q, block); t->depth--;                                \
            return;                                                                      \
        }                                                                                \
        submit_sync(t, kind, flags8, q, block, NULL, 1, real.field_f);                   \
    }

#define SYNC_FN_API(name, field_f, kind, flags8)                                         \
    void name(void *q, void *ctx, qt_fn_t fn) {                                          \
        QT_PROLOGUE(name)                                                                \
        if (!qt_is_user_call(t, ra)) { real.field_f(q, ctx, fn); return; }              \
        submit_sync(t, kind, flags8 | QT_EF_FUNCTION, q, (void *)fn, ctx, 0, real.field_f); \
    }

ASYNC_BLOCK_API(dispatch_async, async, async_f, QT_KIND_ASYNC, 0)
ASYNC_FN_API(dispatch_async_f, async_f, QT_KIND_ASYNC, 0)
ASYNC_BLOCK_API(dispatch_barrier_async, barrier_async, barrier_async_f, QT_KIND_BARRIER_ASYNC, QT_EF_BARRIER)
ASYNC_FN_API(dispatch_barrier_async_f, barrier_async_f, QT_KIND_BARRIER_ASYNC, QT_EF_BARRIER)
SYNC_BLOCK_API(dispatch_sync, sync, sync_f, QT_KIND_SYNC, 0)
SYNC_FN_API(dispatch_sync_f, sync_f, QT_KIND_SYNC, 0)
SYNC_BLOCK_API(dispatch_barrier_sync, barrier_sync, barrier_sync_f, QT_KIND_BARRIER_SYNC, QT_EF_BARRIER)
SYNC_FN_API(dispatch_barrier_sync_f, barrier_sync_f, QT_KIND_BARRIER_SYNC, QT_EF_BARRIER)
SYNC_BLOCK_API(dispatch_async_and_wait, async_and_wait, async_and_wait_f, QT_KIND_ASYNC_AND_WAIT, 0)
SYNC_FN_API(dispatch_async_and_wait_f, async_and_wait_f, QT_KIND_ASYNC_AND_WAIT, 0)
SYNC_BLOCK_API(dispatch_barrier_async_and_wait, barrier_async_and_wait, barrier_async_and_wait_f,
               QT_KIND_BARRIER_ASYNC_AND_WAIT, QT_EF_BARRIER)
SYNC_FN_API(dispatch_barrier_async_and_wait_f, barrier_async_and_wait_f, QT_KIND_BARRIER_ASYNC_AND_WAIT, QT_EF_BARRIER)

// after: the real dispatch_after_f with our slot; `when` is kept as the ENQUEUE's extra.
static void submit_after(qt_thread_t *t, unsigned flags8, uint64_t when, void *q, void *work, void *ctx, int is_block) {
    qt_fn_t trampoline;
    void *c = enqueue_async(t, QT_KIND_AFTER, flags8, q, work, ctx, is_block, when, &trampoline);
    t->depth++;
    real.after_f(when, q, c, trampoline);
    t->depth--;
}

void dispatch_after(uint64_t when, void *q, void *block) {
    QT_PROLOGUE(dispatch_after)
    if (!qt_is_user_call(t, ra)) { real.after(when, q, block); return; }
    if (is_workitem(block)) {
        enqueue_workitem(t, QT_KIND_AFTER, 0, q, block, when);
        t->depth++; real.after(when, q, block); t->depth--;
        return;
    }
    submit_after(t, qt_caller_flags(ra), when, q, block, NULL, 1);
}

void dispatch_after_f(uint64_t when, void *q, void *ctx, qt_fn_t fn) {
    QT_PROLOGUE(dispatch_after_f)
    if (!qt_is_user_call(t, ra)) { real.after_f(when, q, ctx, fn); return; }
    submit_after(t, QT_EF_FUNCTION | qt_caller_flags(ra), when, q, (void *)fn, ctx, 0);
}

// ---- apply ----

typedef struct { void *work; void *ctx; uint64_t id; int is_block; } qt_apply_ctx_t;

static void tramp_apply(void *p, size_t i) {
    qt_apply_ctx_t *a = p;
    qt_thread_t *t = &qt_tls;
    int saved = t->depth;
    t->depth = 0;
    qt_rec1(t, QT_APPLY_ITER_START, 0, (uint32_t)i, a->id);
    if (a->is_block)
        ((void (*)(void *, size_t))((struct qt_block_layout *)a->work)->invoke)(a->work, i);
    else
        ((qt_apply_fn_t)a->work)(a->ctx, i);
    qt_rec1(t, QT_APPLY_ITER_END, 0, (uint32_t)i, a->id);
    t->depth = saved;
}

static void run_apply(qt_thread_t *t, size_t n, void *q, void *work, void *ctx, int is_block) {
    qt_apply_ctx_t a = { work, ctx, qt_next_id(t), is_block };
    if (q) note_queue(t, q);
    if (q) check_deadlock(t, q, 2, 0);
    qt_rec3(t, QT_APPLY_BEGIN, 0, 0, a.id, (uint64_t)(uintptr_t)q, (uint64_t)n);
    t->depth++;
    real.apply_f(n, q, &a, tramp_apply);
    t->depth--;
    qt_rec1(t, QT_APPLY_END, 0, 0, a.id);
}

void dispatch_apply(size_t n, void *q, void *block) {
    QT_PROLOGUE(dispatch_apply)
    if (!qt_is_user_call(t, ra)) { real.apply(n, q, block); return; }
    run_apply(t, n, q, block, NULL, 1);
}

void dispatch_apply_f(size_t n, void *q, void *ctx, qt_apply_fn_t fn) {
    QT_PROLOGUE(dispatch_apply_f)
    if (!qt_is_user_call(t, ra)) { real.apply_f(n, q, ctx, fn); return; }
    run_apply(t, n, q, (void *)fn, ctx, 0);
}

// ---- groups ----

static void group_submit(qt_thread_t *t, unsigned kind, unsigned flags8, void *g, void *q, void *work, void *ctx,
                         int is_block, void (*real_f)(void *, void *, void *, qt_fn_t)) {
    qt_fn_t trampoline;
    void *c = enqueue_async(t, kind, flags8, q, work, ctx, is_block, (uint64_t)(uintptr_t)g, &trampoline);
    t->depth++;
    real_f(g, q, c, trampoline);
    t->depth--;
}

void dispatch_group_async(void *g, void *q, void *block) {
    QT_PROLOGUE(dispatch_group_async)
    if (!qt_is_user_call(t, ra)) { real.group_async(g, q, block); return; }
    if (is_workitem(block)) {
        enqueue_workitem(t, QT_KIND_GROUP_ASYNC, 0, q, block, (uint64_t)(uintptr_t)g);
        t->depth++; real.group_async(g, q, block); t->depth--;
        return;
    }
    group_submit(t, QT_KIND_GROUP_ASYNC, qt_caller_flags(ra), g, q, block, NULL, 1, real.group_async_f);
}

void dispatch_group_async_f(void *g, void *q, void *ctx, qt_fn_t fn) {
    QT_PROLOGUE(dispatch_group_async_f)
    if (!qt_is_user_call(t, ra)) { real.group_async_f(g, q, ctx, fn); return; }
    group_submit(t, QT_KIND_GROUP_ASYNC, QT_EF_FUNCTION | qt_caller_flags(ra), g, q, (void *)fn, ctx, 0, real.group_async_f);
}

void dispatch_group_notify(void *g, void *q, void *block) {
    QT_PROLOGUE(dispatch_group_notify)
    if (!qt_is_user_call(t, ra)) { real.group_notify(g, q, block); return; }
    if (is_workitem(block)) {
        enqueue_workitem(t, QT_KIND_GROUP_NOTIFY, 0, q, block, (uint64_t)(uintptr_t)g);
        t->depth++; real.group_notify(g, q, block); t->depth--;
        return;
    }
    group_submit(t, QT_KIND_GROUP_NOTIFY, 0, g, q, block, NULL, 1, real.group_notify_f);
}

void dispatch_group_notify_f(void *g, void *q, void *ctx, qt_fn_t fn) {
    QT_PROLOGUE(dispatch_group_notify_f)
    if (!qt_is_user_call(t, ra)) { real.group_notify_f(g, q, ctx, fn); return; }
    group_submit(t, QT_KIND_GROUP_NOTIFY, QT_EF_FUNCTION, g, q, (void *)fn, ctx, 0, real.group_notify_f);
}

void *dispatch_group_create(void) {
    QT_PROLOGUE(dispatch_group_create)
    void *g = real.group_create();
    if (qt_is_user_call(t, ra)) qt_rec1(t, QT_GROUP_CREATE, 0, 0, (uint64_t)(uintptr_t)g);
    return g;
}

void dispatch_group_enter(void *g) {
    QT_PROLOGUE(dispatch_group_enter)
    if (qt_is_user_call(t, ra)) qt_rec1(t, QT_GROUP_ENTER, 0, 0, (uint64_t)(uintptr_t)g);
    real.group_enter(g);
}

void dispatch_group_leave(void *g) {
    QT_PROLOGUE(dispatch_group_leave)
    // Record before leaving: the leave may fire the notify on another thread at once.
    if (qt_is_user_call(t, ra)) qt_rec1(t, QT_GROUP_LEAVE, 0, 0, (uint64_t)(uintptr_t)g);
    real.group_leave(g);
}

long dispatch_group_wait(void *g, uint64_t timeout) {
    QT_PROLOGUE(dispatch_group_wait)
    if (!qt_is_user_call(t, ra)) return real.group_wait(g, timeout);
    qt_rec2(t, QT_GROUP_WAIT_BEGIN, 0, 0, (uint64_t)(uintptr_t)g, timeout);
    t->depth++;
    long r = real.group_wait(g, timeout);
    t->depth--;
    qt_rec1(t, QT_GROUP_WAIT_END, 0, r != 0, (uint64_t)(uintptr_t)g);
    return r;
}

// ---- semaphores ----

void *dispatch_semaphore_create(long value) {
    QT_PROLOGUE(dispatch_semaphore_create)
    void *s = real.semaphore_create(value);
    if (s && qt_is_user_call(t, ra)) qt_rec2(t, QT_SEM_CREATE, 0, 0, (uint64_t)(uintptr_t)s, (uint64_t)value);
    return s;
}

long dispatch_semaphore_wait(void *s, uint64_t timeout) {
    QT_PROLOGUE(dispatch_semaphore_wait)
    if (!qt_is_user_call(t, ra)) return real.semaphore_wait(s, timeout);
    qt_rec2(t, QT_SEM_WAIT_BEGIN, 0, 0, (uint64_t)(uintptr_t)s, timeout);
    t->depth++;
    // Try without waiting first: that is libdispatch's own fast path, so the result is the
    // same, and it tells whether the caller really blocked.
    long r = real.semaphore_wait(s, 0 /* DISPATCH_TIME_NOW */);
    int blocked = 0;
    if (r != 0 && timeout != 0) { blocked = 1; r = real.semaphore_wait(s, timeout); }
    t->depth--;
    qt_rec1(t, QT_SEM_WAIT_END, 0, (uint32_t)((r != 0) | (blocked << 1)), (uint64_t)(uintptr_t)s);
    return r;
}

long dispatch_semaphore_signal(void *s) {
    QT_PROLOGUE(dispatch_semaphore_signal)
    if (!qt_is_user_call(t, ra)) return real.semaphore_signal(s);
    qt_rec1(t, QT_SEM_SIGNAL, 0, 0, (uint64_t)(uintptr_t)s);
    return real.semaphore_signal(s);
}

// ---- queues ----

static void record_queue_create(qt_thread_t *t, void *q, const char *label, void *attr, void *target) {
    uint32_t bits = attr_bits(attr);
    int relpri = 0;
    unsigned qos = real.queue_get_qos_class ? real.queue_get_qos_class(q, &relpri) : 0;
    qt_entry_t *e = table_find(g_queues, QT_TABLE_SIZE, (uintptr_t)q, 1);
    if (e) { e->b = (uint64_t)(uintptr_t)target; e->a = (bits & QT_Q_CONCURRENT) | QT_Q_KNOWN; }
    uint32_t arg = (bits & 3u) | ((qos & 0xffu) << 8) | ((uint32_t)((relpri + 128) & 0xff) << 16);
    uint64_t words[2] = { (uint64_t)(uintptr_t)q, (uint64_t)(uintptr_t)target };
    qt_rec_string(t, QT_QUEUE_CREATE, arg, words, 2, label ? label : "");
}

void *dispatch_queue_create(const char *label, void *attr) {
    QT_PROLOGUE(dispatch_queue_create)
    if (!qt_is_user_call(t, ra)) return real.queue_create(label, attr);
    t->depth++;
    void *q = real.queue_create(label, attr);
    t->depth--;
    if (q) record_queue_create(t, q, label, attr, NULL);
    return q;
}

void *dispatch_queue_create_with_target(const char *label, void *attr, void *target) {
    QT_PROLOGUE(dispatch_queue_create_with_target)
    if (!qt_is_user_call(t, ra)) return real.queue_create_with_target(label, attr, target);
    t->depth++;
    void *q = real.queue_create_with_target(label, attr, target);
    t->depth--;
    if (q) record_queue_create(t, q, label, attr, target);
    return q;
}

void *dispatch_queue_attr_make_with_qos_class(void *attr, unsigned qos, int relpri) {
    qt_resolve();
    void *r = real.attr_make_with_qos_class(attr, qos, relpri);
    if (r) remember_attr(r, attr_bits(attr));
    return r;
}

void *dispatch_queue_attr_make_initially_inactive(void *attr) {
    qt_resolve();
    void *r = real.attr_make_initially_inactive(attr);
    if (r) remember_attr(r, attr_bits(attr) | QT_Q_INACTIVE);
    return r;
}

void *dispatch_get_global_queue(intptr_t identifier, uintptr_t flags) {
    QT_PROLOGUE(dispatch_get_global_queue)
    void *q = real.get_global_queue(identifier, flags);
    if (q && qt_is_user_call(t, ra)) note_queue(t, q);
    return q;
}

void dispatch_set_target_queue(void *object, void *target) {
    QT_PROLOGUE(dispatch_set_target_queue)
    if (qt_is_user_call(t, ra)) {
        qt_entry_t *e = table_find(g_queues, QT_TABLE_SIZE, (uintptr_t)object, 0);
        if (e) e->b = (uint64_t)(uintptr_t)target;
        if (target) note_queue(t, target);
        qt_rec2(t, QT_SET_TARGET, 0, 0, (uint64_t)(uintptr_t)object, (uint64_t)(uintptr_t)target);
    }
    real.set_target_queue(object, target);
}

#define OBJECT_API(name, field, type)                                              \
    void name(void *object) {                                                      \
        QT_PROLOGUE(name)                                                          \
        if (qt_is_user_call(t, ra)) qt_rec1(t, type, 0, 0, (uint64_t)(uintptr_t)object); \
        real.field(object);                                                        \
    }

OBJECT_API(dispatch_suspend, suspend, QT_SUSPEND)
OBJECT_API(dispatch_resume, resume, QT_RESUME)
OBJECT_API(dispatch_activate, activate, QT_ACTIVATE)

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

static void wrap_copy(void *dst, const void *src) {
    qt_wrap_t *d = dst;
    (void)src;
    if (d->inner) d->inner = _Block_copy(d->inner);
}

static void wrap_dispose(const void *b) {
    const qt_wrap_t *w = b;
    if (w->inner) _Block_release(w->inner);
}

static const struct { unsigned long reserved, size; void *copy, *dispose; } g_wrap_descriptor = {
    0, sizeof(qt_wrap_t), (void *)wrap_copy, (void *)wrap_dispose,
};

/// A stack block; libdispatch copies it to the heap (retaining `inner`) when it keeps it.
static qt_wrap_t make_wrap(void *invoke, void *inner, qt_fn_t fn, void *object, uint64_t id, uint32_t which) {
    qt_wrap_t w = { (void *)_NSConcreteStackBlock, QT_BLOCK_HAS_COPY_DISPOSE, 0, invoke, &g_wrap_descriptor,
                    inner, fn, object, id, which };
    return w;
}

static void workitem_invoke(qt_wrap_t *w) {
    qt_thread_t *t = &qt_tls;
    int saved = t->depth;
    t->depth = 0;
    qt_rec1(t, QT_START, QT_EF_WORKITEM, 0, w->id);
    qt_invoke_block(w->inner);
    qt_rec1(t, QT_END, 0, 0, w->id);
    t->depth = saved;
}

static void remember_workitem(qt_thread_t *t, void *block, uint64_t id, unsigned long flags, unsigned qos) {
    if (!block) return;
    qt_entry_t *e = table_find(g_workitems, QT_TABLE_SIZE, (uintptr_t)block, 1);
    if (e) { e->a = id; e->b = flags; }
    qt_rec2(t, QT_WORKITEM_CREATE, 0, (uint32_t)(flags & 0xffffff) | ((qos & 0xffu) << 24), id, (uint64_t)(uintptr_t)block);
}

void *dispatch_block_create(unsigned long flags, void *block) {
    QT_PROLOGUE(dispatch_block_create)
    if (!qt_is_user_call(t, ra) || !block) return real.block_create(flags, block);
    uint64_t id = qt_next_id(t);
    qt_wrap_t w = make_wrap((void *)workitem_invoke, block, NULL, NULL, id, 0);
    t->depth++;
    void *r = real.block_create(flags, &w);
    t->depth--;
    remember_workitem(t, r, id, flags, 0);
    return r;
}

void *dispatch_block_create_with_qos_class(unsigned long flags, unsigned qos, int relpri, void *block) {
    QT_PROLOGUE(dispatch_block_create_with_qos_class)
    if (!qt_is_user_call(t, ra) || !block) return real.block_create_with_qos_class(flags, qos, relpri, block);
    uint64_t id = qt_next_id(t);
    qt_wrap_t w = make_wrap((void *)workitem_invoke, block, NULL, NULL, id, 0);
    t->depth++;
    void *r = real.block_create_with_qos_class(flags, qos, relpri, &w);
    t->depth--;
    remember_workitem(t, r, id, flags, qos);
    return r;
}

void dispatch_block_perform(unsigned long flags, void *block) {
    QT_PROLOGUE(dispatch_block_perform)
    if (!qt_is_user_call(t, ra) || !block) { real.block_perform(flags, block); return; }
    uint64_t id = qt_next_id(t);
    qt_rec1(t, QT_WORKITEM_PERFORM, 0, 0, id);
    qt_wrap_t w = make_wrap((void *)workitem_invoke, block, NULL, NULL, id, 0);
    t->depth++;
    real.block_perform(flags, &w);
    t->depth--;
}

static void notify_invoke(qt_wrap_t *w) {
    qt_thread_t *t = &qt_tls;
    int saved = t->depth;
    t->depth = 0;
    qt_rec1(t, QT_START, 0, QT_KIND_WORKITEM_NOTIFY, w->id);
    held_push(t, w->object);
    qt_invoke_block(w->inner);
    held_pop(t);
    qt_rec1(t, QT_END, 0, 0, w->id);
    t->depth = saved;
}

void dispatch_block_notify(void *block, void *q, void *notification) {
    QT_PROLOGUE(dispatch_block_notify)
    if (!qt_is_user_call(t, ra) || !notification) { real.block_notify(block, q, notification); return; }
    uint64_t id = qt_next_id(t);
    qt_entry_t *e = table_find(g_workitems, QT_TABLE_SIZE, (uintptr_t)block, 0);
    note_queue(t, q);
    qt_rec3(t, QT_ENQUEUE, 0, QT_KIND_WORKITEM_NOTIFY, id, (uint64_t)(uintptr_t)q, e ? e->a : 0);
    qt_wrap_t w = make_wrap((void *)notify_invoke, notification, NULL, q, id, 0);
    t->depth++;
    real.block_notify(block, q, &w);
    t->depth--;
}

// ---- sources ----

static uint32_t source_type_code(const void *type) {
    for (uint32_t i = 1; i < 9; i++) if (type && type == g_source_types[i]) return i;
    return 0;
}

void *dispatch_source_create(const void *type, uintptr_t handle, uintptr_t mask, void *q) {
    QT_PROLOGUE(dispatch_source_create)
    if (!qt_is_user_call(t, ra)) return real.source_create(type, handle, mask, q);
    t->depth++;
    void *s = real.source_create(type, handle, mask, q);
    t->depth--;
    if (s) {
        if (q) note_queue(t, q);
        qt_rec4(t, QT_SOURCE_CREATE, 0, source_type_code(type), (uint64_t)(uintptr_t)s, handle, mask, (uint64_t)(uintptr_t)q);
    }
    return s;
}

void dispatch_source_set_timer(void *s, uint64_t start, uint64_t interval, uint64_t leeway) {
    QT_PROLOGUE(dispatch_source_set_timer)
    if (qt_is_user_call(t, ra)) qt_rec4(t, QT_SOURCE_SET_TIMER, 0, 0, (uint64_t)(uintptr_t)s, start, interval, leeway);
    real.source_set_timer(s, start, interval, leeway);
}

static void handler_invoke(qt_wrap_t *w) {
    qt_thread_t *t = &qt_tls;
    int saved = t->depth;
    t->depth = 0;
    uint64_t data = real.source_get_data ? real.source_get_data(w->object) : 0;
    qt_rec2(t, QT_SOURCE_HANDLER_BEGIN, 0, w->which, (uint64_t)(uintptr_t)w->object, data);
    if (w->inner) qt_invoke_block(w->inner);
    else w->fn(real.get_context(w->object));
    qt_rec1(t, QT_SOURCE_HANDLER_END, 0, w->which, (uint64_t)(uintptr_t)w->object);
    t->depth = saved;
}

static void set_handler(qt_thread_t *t, void *ra, uint32_t which, void *s, void *block, qt_fn_t fn,
                        void (*real_block)(void *, void *), void (*real_fn)(void *, qt_fn_t)) {
    if (!qt_is_user_call(t, ra) || (!block && !fn)) {
        if (real_fn && !block) real_fn(s, fn); else real_block(s, block);
        return;
    }
    qt_rec1(t, QT_SOURCE_SET_HANDLER, 0, which, (uint64_t)(uintptr_t)s);
    // The _f handler is called with the source's context; the wrapper block fetches it the
    // same way, so one wrapper kind serves both.
    qt_wrap_t w = make_wrap((void *)handler_invoke, block, fn, s, 0, which);
    t->depth++;
    real_block(s, &w);
    t->depth--;
}

void dispatch_source_set_event_handler(void *s, void *block) {
    QT_PROLOGUE(dispatch_source_set_event_handler)
    set_handler(t, ra, 0, s, block, NULL, real.source_set_event_handler, NULL);
}
void dispatch_source_set_event_handler_f(void *s, qt_fn_t fn) {
    QT_PROLOGUE(dispatch_source_set_event_handler_f)
    set_handler(t, ra, 0, s, NULL, fn, real.source_set_event_handler, real.source_set_event_handler_f);
}
void dispatch_source_set_cancel_handler(void *s, void *block) {
    QT_PROLOGUE(dispatch_source_set_cancel_handler)
    set_handler(t, ra, 1, s, block, NULL, real.source_set_cancel_handler, NULL);
}
void dispatch_source_set_cancel_handler_f(void *s, qt_fn_t fn) {
    QT_PROLOGUE(dispatch_source_set_cancel_handler_f)
    set_handler(t, ra, 1, s, NULL, fn, real.source_set_cancel_handler, real.source_set_cancel_handler_f);
}
void dispatch_source_set_registration_handler(void *s, void *block) {
    QT_PROLOGUE(dispatch_source_set_registration_handler)
    set_handler(t, ra, 2, s, block, NULL, real.source_set_registration_handler, NULL);
}
void dispatch_source_set_registration_handler_f(void *s, qt_fn_t fn) {
    QT_PROLOGUE(dispatch_source_set_registration_handler_f)
    set_handler(t, ra, 2, s, NULL, fn, real.source_set_registration_handler, real.source_set_registration_handler_f);
}

void dispatch_source_cancel(void *s) {
    QT_PROLOGUE(dispatch_source_cancel)
    if (qt_is_user_call(t, ra)) qt_rec1(t, QT_SOURCE_CANCEL, 0, 0, (uint64_t)(uintptr_t)s);
    real.source_cancel(s);
}

void dispatch_source_merge_data(void *s, uintptr_t value) {
    QT_PROLOGUE(dispatch_source_merge_data)
    if (qt_is_user_call(t, ra)) qt_rec2(t, QT_SOURCE_MERGE_DATA, 0, 0, (uint64_t)(uintptr_t)s, value);
    real.source_merge_data(s, value);
}

// ---- Dispatch I/O ----

static void io_handler_invoke(qt_wrap_t *w, bool done, void *data, int error) {
    qt_thread_t *t = &qt_tls;
    int saved = t->depth;
    t->depth = 0;
    uint64_t bytes = data && real.data_get_size ? real.data_get_size(data) : 0;
    qt_rec2(t, QT_IO_HANDLER_BEGIN, 0, (uint32_t)(done ? 1 : 0) | ((uint32_t)error << 8), w->id, bytes);
    ((void (*)(void *, bool, void *, int))((struct qt_block_layout *)w->inner)->invoke)(w->inner, done, data, error);
    qt_rec1(t, QT_IO_HANDLER_END, 0, 0, w->id);
    t->depth = saved;
}

static void fd_handler_invoke(qt_wrap_t *w, void *data, int error) {
    qt_thread_t *t = &qt_tls;
    int saved = t->depth;
    t->depth = 0;
    uint64_t bytes = data && real.data_get_size ? real.data_get_size(data) : 0;
    qt_rec2(t, QT_IO_HANDLER_BEGIN, 0, 1u | ((uint32_t)error << 8), w->id, bytes);
    ((void (*)(void *, void *, int))((struct qt_block_layout *)w->inner)->invoke)(w->inner, data, error);
    qt_rec1(t, QT_IO_HANDLER_END, 0, 0, w->id);
    t->depth = saved;
}

static void cleanup_invoke(qt_wrap_t *w, int error) {
    qt_thread_t *t = &qt_tls;
    int saved = t->depth;
    t->depth = 0;
    qt_rec1(t, QT_IO_CLEANUP_BEGIN, 0, (uint32_t)error, w->id);
    ((void (*)(void *, int))((struct qt_block_layout *)w->inner)->invoke)(w->inner, error);
    qt_rec1(t, QT_IO_CLEANUP_END, 0, 0, w->id);
    t->depth = saved;
}

static void record_io_create(qt_thread_t *t, void *channel, unsigned long type, uint64_t fd, uint64_t cleanup_id,
                             const char *path, void *q) {
    if (!channel) return;
    if (q) note_queue(t, q);
    uint64_t words[3] = { (uint64_t)(uintptr_t)channel, fd, cleanup_id };
    qt_rec_string(t, QT_IO_CREATE, (uint32_t)type, words, 3, path ? path : "");
}

void *dispatch_io_create(unsigned long type, int fd, void *q, void *cleanup) {
    QT_PROLOGUE(dispatch_io_create)
    if (!qt_is_user_call(t, ra)) return real.io_create(type, fd, q, cleanup);
    uint64_t id = cleanup ? qt_next_id(t) : 0;
    qt_wrap_t w = make_wrap((void *)cleanup_invoke, cleanup, NULL, NULL, id, 0);
    t->depth++;
    void *c = real.io_create(type, fd, q, cleanup ? &w : NULL);
    t->depth--;
    record_io_create(t, c, type, (uint64_t)fd, id, NULL, q);
    return c;
}

void *dispatch_io_create_with_path(unsigned long type, const char *path, int oflag, unsigned mode, void *q, void *cleanup) {
    QT_PROLOGUE(dispatch_io_create_with_path)
    if (!qt_is_user_call(t, ra)) return real.io_create_with_path(type, path, oflag, mode, q, cleanup);
    uint64_t id = cleanup ? qt_next_id(t) : 0;
    qt_wrap_t w = make_wrap((void *)cleanup_invoke, cleanup, NULL, NULL, id, 0);
    t->depth++;
    void *c = real.io_create_with_path(type, path, oflag, mode, q, cleanup ? &w : NULL);
    t->depth--;
    record_io_create(t, c, type, ~0ull, id, path, q);
    return c;
}

void *dispatch_io_create_with_io(unsigned long type, void *io, void *q, void *cleanup) {
    QT_PROLOGUE(dispatch_io_create_with_io)
    if (!qt_is_user_call(t, ra)) return real.io_create_with_io(type, io, q, cleanup);
    uint64_t id = cleanup ? qt_next_id(t) : 0;
    qt_wrap_t w = make_wrap((void *)cleanup_invoke, cleanup, NULL, NULL, id, 0);
    t->depth++;
    void *c = real.io_create_with_io(type, io, q, cleanup ? &w : NULL);
    t->depth--;
    record_io_create(t, c, type, ~0ull, id, NULL, q);
    return c;
}

void dispatch_io_read(void *channel, int64_t offset, size_t length, void *q, void *handler) {
    QT_PROLOGUE(dispatch_io_read)
    if (!qt_is_user_call(t, ra) || !handler) { real.io_read(channel, offset, length, q, handler); return; }
    uint64_t id = qt_next_id(t);
    note_queue(t, q);
    qt_rec4(t, QT_IO_READ, 0, 0, (uint64_t)(uintptr_t)channel, id, (uint64_t)offset, (uint64_t)length);
    qt_wrap_t w = make_wrap((void *)io_handler_invoke, handler, NULL, channel, id, 0);
    t->depth++;
    real.io_read(channel, offset, length, q, &w);
    t->depth--;
}

void dispatch_io_write(void *channel, int64_t offset, void *data, void *q, void *handler) {
    QT_PROLOGUE(dispatch_io_write)
    if (!qt_is_user_call(t, ra) || !handler) { real.io_write(channel, offset, data, q, handler); return; }
    uint64_t id = qt_next_id(t);
    uint64_t length = data && real.data_get_size ? real.data_get_size(data) : 0;
    note_queue(t, q);
    qt_rec4(t, QT_IO_WRITE, 0, 0, (uint64_t)(uintptr_t)channel, id, (uint64_t)offset, length);
    qt_wrap_t w = make_wrap((void *)io_handler_invoke, handler, NULL, channel, id, 0);
    t->depth++;
    real.io_write(channel, offset, data, q, &w);
    t->depth--;
}

void dispatch_read(int fd, size_t length, void *q, void *handler) {
    QT_PROLOGUE(dispatch_read)
    if (!qt_is_user_call(t, ra) || !handler) { real.read(fd, length, q, handler); return; }
    uint64_t id = qt_next_id(t);
    note_queue(t, q);
    qt_rec4(t, QT_IO_READ, 0, 0, 0, id, (uint64_t)fd, (uint64_t)length);
    qt_wrap_t w = make_wrap((void *)fd_handler_invoke, handler, NULL, NULL, id, 0);
    t->depth++;
    real.read(fd, length, q, &w);
    t->depth--;
}

void dispatch_write(int fd, void *data, void *q, void *handler) {
    QT_PROLOGUE(dispatch_write)
    if (!qt_is_user_call(t, ra) || !handler) { real.write(fd, data, q, handler); return; }
    uint64_t id = qt_next_id(t);
    uint64_t length = data && real.data_get_size ? real.data_get_size(data) : 0;
    note_queue(t, q);
    qt_rec4(t, QT_IO_WRITE, 0, 0, 0, id, (uint64_t)fd, length);
    qt_wrap_t w = make_wrap((void *)fd_handler_invoke, handler, NULL, NULL, id, 0);
    t->depth++;
    real.write(fd, data, q, &w);
    t->depth--;
}

void dispatch_io_barrier(void *channel, void *barrier) {
    QT_PROLOGUE(dispatch_io_barrier)
    if (qt_is_user_call(t, ra)) qt_rec1(t, QT_IO_BARRIER, 0, 0, (uint64_t)(uintptr_t)channel);
    t->depth++;
    real.io_barrier(channel, barrier);
    t->depth--;
}

void dispatch_io_close(void *channel, unsigned long flags) {
    QT_PROLOGUE(dispatch_io_close)
    if (qt_is_user_call(t, ra)) qt_rec1(t, QT_IO_CLOSE, 0, (uint32_t)flags, (uint64_t)(uintptr_t)channel);
    real.io_close(channel, flags);
}

// ---- threads ----

typedef struct { void *(*fn)(void *); void *arg; uint64_t creator; uint32_t kind; } qt_thread_start_t;

static void *thread_trampoline(void *p) {
    qt_thread_start_t start = *(qt_thread_start_t *)p;
    free(p);
    qt_thread_t *t = &qt_tls;
    qt_rec1(t, QT_THREAD_START, 0, start.kind, start.creator);
    pthread_setspecific(g_thread_exit_key, (void *)1);
    return start.fn(start.arg);
}

static void thread_exit_destructor(void *unused) {
    (void)unused;
    qt_thread_t *t = &qt_tls;
    if (t->pos) qt_rec1(t, QT_THREAD_EXIT, 0, 0, 0);
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
    qt_resolve();
    void *ra = __builtin_return_address(0);
    uintptr_t a = (uintptr_t)ra;
    int from_dispatch = a >= g_dispatch_lo && a < g_dispatch_hi;
    // Only threads of a process that is tracing Dispatch are followed.
    if (!qt_enabled || (!from_dispatch && qtrace_trace_path() == NULL))
        return real.pthread_create(thread, attr, fn, arg);
    qt_thread_start_t *start = malloc(sizeof *start);
    if (!start) return real.pthread_create(thread, attr, fn, arg);
    qt_thread_t *t = &qt_tls;
    *start = (qt_thread_start_t){ fn, arg, (uint64_t)(t->tid ? t->tid : qt_gettid()), from_dispatch ? 1u : 2u };
    int rc = real.pthread_create(thread, attr, thread_trampoline, start);
    if (rc != 0) free(start);
    return rc;
}

int pthread_setname_np(pthread_t thread, const char *name) {
    qt_resolve();
    int rc = real.pthread_setname_np(thread, name);
    if (rc == 0 && qt_enabled && name && pthread_equal(thread, pthread_self()) && qtrace_trace_path())
        qt_rec_string(&qt_tls, QT_THREAD_NAME, 0, NULL, 0, name);
    return rc;
}

// ---- annotations (qtrace_shim.h) ----

void qtrace_mark(const char *name) {
    if (!qt_enabled || !name) return;
    qt_rec_string(&qt_tls, QT_MARK, 0, NULL, 0, name);
}

uint64_t qtrace_interval_begin(const char *name) {
    if (!qt_enabled || !name) return 0;
    qt_thread_t *t = &qt_tls;
    uint64_t id = qt_next_id(t);
    uint64_t words[1] = { id };
    qt_rec_string(t, QT_INTERVAL_BEGIN, 0, words, 1, name);
    return id;
}

void qtrace_interval_end(uint64_t interval_id) {
    if (!qt_enabled || interval_id == 0) return;
    qt_rec1(&qt_tls, QT_INTERVAL_END, 0, 0, interval_id);
}

void qtrace_name_thread(const char *name) {
    if (!qt_enabled || !name) return;
    qt_rec_string(&qt_tls, QT_THREAD_NAME, 0, NULL, 0, name);
}

// ---- process life cycle ----

static void after_fork_child(void) { qt_recorder_after_fork_child(); }

static void at_exit(void) { qtrace_finish(); }

/// This copy's own dispatch_async (a hidden alias binds locally, unlike the exported name).
extern void qt_own_dispatch_async(void *, void *) __attribute__((alias("dispatch_async"), visibility("hidden")));

__attribute__((constructor)) static void qt_init(void) {
    qt_resolve();
    if (real.async == NULL) return;  // no libdispatch in this process: stay inert
    // A linked copy of the shim (QTrace library, in the executable) and a preloaded one may
    // both be present: only the copy that the dynamic linker resolves dispatch_async to
    // records; the other just forwards.
    if (dlsym(RTLD_DEFAULT, "dispatch_async") != (void *)qt_own_dispatch_async) return;
    void *ring = mmap(NULL, (size_t)QT_RING_SIZE * sizeof(qt_slot_t), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    g_ring = ring == MAP_FAILED ? NULL : ring;
    pthread_key_create(&g_thread_exit_key, thread_exit_destructor);
    pthread_atfork(NULL, NULL, after_fork_child);
    atexit(at_exit);
    // The trace file is created on the first recorded event, so processes that load
    // libdispatch but never use it leave no file behind.
    qt_recorder_init_from_env();
}
