// Submission: dispatch_async/sync and their barrier, and_wait and `_f` forms, dispatch_after
// and dispatch_apply, with the deadlock check made before every sync-like call. The hot
// entry points (dispatch_async and friends) inline everything down to the real `_f` call.
#include "shim_internal.h"

#include <stdio.h>
#include <unistd.h>

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
    // A flight recorder keeps what led here, on this thread: it never comes back.
    qt_snapshot_now(QT_SNAPSHOT_DEADLOCK);
    char msg[640];
    int n = snprintf(msg, sizeof msg,
        "qtrace: deadlock: thread %d calls %s onto queue \"%.200s\" while running an item of \"%.200s\"; "
        "it will wait forever (use async, or do the work inline)\n",
        (int)(t->tid ? t->tid : qt_gettid()), kind == QT_DEADLOCK_APPLY ? "dispatch_apply" : "dispatch_sync", label_of(q),
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

static inline __attribute__((always_inline)) void submit_async(qt_thread_t *t, unsigned kind, unsigned flags8, void *q, void *work, void *ctx,
                                int is_block, uint64_t extra, void *ra, void (*real_f)(void *, void *, qt_fn_t)) {
    qt_fn_t trampoline;
    void *c = enqueue_async(t, kind, flags8, q, work, ctx, is_block, extra, ra, &trampoline);
    t->depth++;
    real_f(q, c, trampoline);
    t->depth--;
}

// always_inline: in the single file the interposer once was, the compiler inlined it into
// every sync entry point on its own; in this smaller file its growth limits would not.
static inline __attribute__((always_inline)) void submit_sync(qt_thread_t *t, unsigned kind, unsigned flags8, void *q, void *work, void *ctx,
                                                             int is_block, void *ra, void (*real_f)(void *, void *, qt_fn_t)) {
    uint64_t id = qt_next_id(t);
    qt_sync_slot_t s = { work, ctx, id | ((uint64_t)kind << 56), q };
    note_queue(t, q);
    check_deadlock(t, q, QT_DEADLOCK_SYNC, kind == QT_KIND_BARRIER_SYNC || kind == QT_KIND_BARRIER_ASYNC_AND_WAIT);
    uint32_t site = is_block ? qt_block_site(t, work, ra) : qt_function_site(t, work, ra);
    qt_rec_enqueue_site(t, kind, flags8, id, q, 0, site);
    t->depth++;
    real_f(q, &s, is_block ? tramp_sync_block : tramp_sync_fn);
    t->depth--;
}

/// dispatch_async_f and dispatch_barrier_async_f without a context slot (shim_stubs.c): the
/// program's context goes to libdispatch untouched, with the function's stub. 0: the item
/// takes the slot path (no stub for the function, or an id, queue, context or site too wide
/// for ENQUEUE_F and START_F; the id drawn here is then left unused).
static inline __attribute__((always_inline)) int submit_slotless(qt_thread_t *t, unsigned kind, unsigned flags8, void *q,
                                                                 void *ctx, qt_fn_t fn, void *ra,
                                                                 void (*real_f)(void *, void *, qt_fn_t)) {
#if defined(QTRACE_LTTNG) || defined(QT_NO_SLOTLESS)
    (void)t; (void)kind; (void)flags8; (void)q; (void)ctx; (void)fn; (void)ra; (void)real_f;
    return 0;
#else
    if (QT_LIKELY(!g_slotless_enabled)) return 0;
    uint32_t stub = qt_stub_of(fn);
    if (QT_UNLIKELY(stub == 0 || real.get_current_queue == NULL)) return 0;
    uint64_t id = qt_next_id(t);
    note_queue(t, q);
    uint32_t site = qt_function_site(t, (void *)fn, ra);
    (void)flags8; // a function, a barrier if the kind is: the reader knows them from the kind
    if (QT_UNLIKELY(((id >> 32) | (((uint64_t)(uintptr_t)q | (uint64_t)(uintptr_t)ctx) >> 48) | (site >> 12)) != 0))
        return 0;
    qt_rec_enqueue_f(t, kind, (uint32_t)id, q, site, ctx, stub - 1);
    t->depth++;
    real_f(q, ctx, g_stubs[stub - 1]);
    t->depth--;
    return 1;
#endif
}

#define ASYNC_BLOCK_API(name, field, field_f, kind, flags8)                              \
    void name(void *q, void *block) {                                                    \
        QT_PROLOGUE(name)                                                                \
        if (!qt_is_user_call(t, ra)) { real.field(q, block); return; }                  \
        if (is_workitem(block)) {                                                        \
            enqueue_workitem(t, kind, flags8, q, block, 0);                              \
            t->depth++; real.field(q, block); t->depth--;                                \
            return;                                                                      \
        }                                                                                \
        submit_async(t, kind, flags8, q, block, NULL, 1, 0, ra, real.field_f);         \
    }

#define ASYNC_FN_API(name, field_f, kind, flags8)                                        \
    void name(void *q, void *ctx, qt_fn_t fn) {                                          \
        QT_PROLOGUE(name)                                                                \
        if (!qt_is_user_call(t, ra)) { real.field_f(q, ctx, fn); return; }              \
        unsigned flags = flags8 | QT_EF_FUNCTION | qt_caller_flags(ra);                 \
        /* A Swift job's JOB record names its id: jobs keep the slot path. */           \
        if (QT_LIKELY(!(flags & QT_EF_CONCURRENCY))                                      \
            && submit_slotless(t, kind, flags, q, ctx, fn, ra, real.field_f)) return;    \
        submit_async(t, kind, flags, q, (void *)fn, ctx, 0, 0, ra, real.field_f);        \
    }

#define SYNC_BLOCK_API(name, field, field_f, kind, flags8)                               \
    void name(void *q, void *block) {                                                    \
        QT_PROLOGUE(name)                                                                \
        if (!qt_is_user_call(t, ra)) { real.field(q, block); return; }                  \
        if (is_workitem(block)) {                                                        \
            check_deadlock(t, q, QT_DEADLOCK_SYNC, (flags8) & QT_EF_BARRIER);            \
            enqueue_workitem(t, kind, flags8, q, block, 0);                              \
            t->depth++; real.field(q, block); t->depth--;                                \
            return;                                                                      \
        }                                                                                \
        submit_sync(t, kind, flags8, q, block, NULL, 1, ra, real.field_f);               \
    }

#define SYNC_FN_API(name, field_f, kind, flags8)                                         \
    void name(void *q, void *ctx, qt_fn_t fn) {                                          \
        QT_PROLOGUE(name)                                                                \
        if (!qt_is_user_call(t, ra)) { real.field_f(q, ctx, fn); return; }              \
        submit_sync(t, kind, flags8 | QT_EF_FUNCTION, q, (void *)fn, ctx, 0, ra, real.field_f); \
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

/// This copy's own dispatch_async (a hidden alias binds locally, unlike the exported name).
/// The alias must be in the translation unit that defines dispatch_async.
extern void qt_own_dispatch_async(void *, void *) __attribute__((alias("dispatch_async"), visibility("hidden")));

// ---- after ----

// after: the real dispatch_after_f with our slot; `when` is kept as the ENQUEUE's extra.
static void submit_after(qt_thread_t *t, unsigned flags8, uint64_t when, void *q, void *work, void *ctx, int is_block,
                         void *ra) {
    qt_fn_t trampoline;
    void *c = enqueue_async(t, QT_KIND_AFTER, flags8, q, work, ctx, is_block, when, ra, &trampoline);
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
    submit_after(t, 0, when, q, block, NULL, 1, ra);
}

void dispatch_after_f(uint64_t when, void *q, void *ctx, qt_fn_t fn) {
    QT_PROLOGUE(dispatch_after_f)
    if (!qt_is_user_call(t, ra)) { real.after_f(when, q, ctx, fn); return; }
    submit_after(t, QT_EF_FUNCTION | qt_caller_flags(ra), when, q, (void *)fn, ctx, 0, ra);
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

static void run_apply(qt_thread_t *t, size_t n, void *q, void *work, void *ctx, int is_block, void *ra) {
    qt_apply_ctx_t a = { work, ctx, qt_next_id(t), is_block };
    if (q) note_queue(t, q);
    if (q) check_deadlock(t, q, QT_DEADLOCK_APPLY, 0);
    uint32_t site = is_block ? qt_block_site(t, work, ra) : qt_function_site(t, work, ra);
    qt_rec4(t, QT_APPLY_BEGIN, 0, 0, a.id, (uint64_t)(uintptr_t)q, (uint64_t)n, site);
    t->depth++;
    real.apply_f(n, q, &a, tramp_apply);
    t->depth--;
    qt_rec1(t, QT_APPLY_END, 0, 0, a.id);
}

void dispatch_apply(size_t n, void *q, void *block) {
    QT_PROLOGUE(dispatch_apply)
    if (!qt_is_user_call(t, ra)) { real.apply(n, q, block); return; }
    run_apply(t, n, q, block, NULL, 1, ra);
}

void dispatch_apply_f(size_t n, void *q, void *ctx, qt_apply_fn_t fn) {
    QT_PROLOGUE(dispatch_apply_f)
    if (!qt_is_user_call(t, ra)) { real.apply_f(n, q, ctx, fn); return; }
    run_apply(t, n, q, (void *)fn, ctx, 0, ra);
}
