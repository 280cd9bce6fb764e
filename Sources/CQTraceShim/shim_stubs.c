// Function items without a context slot (format 1.8; docs/trace-format.md, "Function items
// without a slot"). dispatch_async_f hands libdispatch the program's own context and, instead
// of the function, a stub from a static table: the stub knows its index, the table maps the
// index to the function on its first use, and nothing per item is allocated, written or read
// beyond the trace. START_F names (stub, context, current queue), and the reader pairs it
// with the oldest pending ENQUEUE_F of that triple (exact on serial queues).
#include "shim_internal.h"

// The LTTng shim keeps the slot path (docs/lttng.md).
#ifndef QTRACE_LTTNG

qt_stub_entry_t g_stub_map[QT_STUB_MAP_SIZE];
int g_slotless_enabled;

void qt_stubs_init_from_env(void) {
    // On unless QTRACE_SLOTLESS=0: the program saves a cache line per pending item, and the
    // reader's pairing now costs less than that (docs/performance.md, run (27)).
    const char *v = getenv("QTRACE_SLOTLESS");
    g_slotless_enabled = !(v != NULL && strcmp(v, "0") == 0);
}
/// The function each stub runs: written once, before the stub's index is published.
static qt_fn_t g_stub_fn[QT_STUB_COUNT];
static uint32_t g_stub_count;

/// Runs stub `index`'s function with the program's context between START_F and END_F. The
/// queue it runs on is libdispatch's current queue: the one the item was submitted to (a
/// serial queue, or a concurrent one, never its target), which pairs it exactly.
__attribute__((noinline)) static void run_stub(void *ctx, uint32_t index) {
    qt_thread_t *t = &qt_tls;
    qt_fn_t fn = __atomic_load_n(&g_stub_fn[index], __ATOMIC_RELAXED);
#ifdef QT_BENCH_NO_CURRENT_QUEUE
    void *q = NULL; // measuring what asking for the queue costs (the pairing is then inexact)
#else
    void *q = real.get_current_queue();
#endif
    int saved_depth = t->depth;
    t->depth = 0;
    qt_rec_start_f(t, index, ctx, q);
    held_push(t, q);
    fn(ctx);
    held_pop(t);
    qt_rec_end_f(t, index);
    t->depth = saved_depth;
}

// The stubs: stub_ABC is stub A*64 + B*8 + C, a tail call of run_stub with its index.
#define QT_STUB(a, b, c) static void stub_##a##b##c(void *ctx) { run_stub(ctx, (a) * 64 + (b) * 8 + (c)); }
#define QT_STUB_NAME(a, b, c) stub_##a##b##c,
#define QT_EIGHT(m, a, b) m(a, b, 0) m(a, b, 1) m(a, b, 2) m(a, b, 3) m(a, b, 4) m(a, b, 5) m(a, b, 6) m(a, b, 7)
#define QT_SIXTY_FOUR(m, a) QT_EIGHT(m, a, 0) QT_EIGHT(m, a, 1) QT_EIGHT(m, a, 2) QT_EIGHT(m, a, 3) \
    QT_EIGHT(m, a, 4) QT_EIGHT(m, a, 5) QT_EIGHT(m, a, 6) QT_EIGHT(m, a, 7)
#define QT_TWO_HUNDRED_FIFTY_SIX(m) QT_SIXTY_FOUR(m, 0) QT_SIXTY_FOUR(m, 1) QT_SIXTY_FOUR(m, 2) QT_SIXTY_FOUR(m, 3)

_Static_assert(QT_STUB_COUNT == 256, "the stubs below are 4 x 8 x 8");
QT_TWO_HUNDRED_FIFTY_SIX(QT_STUB)
const qt_fn_t g_stubs[QT_STUB_COUNT] = { QT_TWO_HUNDRED_FIFTY_SIX(QT_STUB_NAME) };

/// A function's first use: its map entry, and a stub while the table has one. The thread that
/// inserts the entry publishes the stub; others meanwhile see 0 and take the slot path (no
/// waiting). Functions past the table's end keep an entry too (QT_STUB_NONE), so their later
/// items find out in one probe.
uint32_t qt_stub_assign(uintptr_t fn) {
    if (fn == 0) return 0; // 0 marks a free entry (libdispatch crashes on a NULL function anyway)
    size_t i = qt_hash(fn, QT_STUB_MAP_SIZE);
    for (int probe = 0; probe < 64; probe++, i = (i + 1) & (QT_STUB_MAP_SIZE - 1)) {
        qt_stub_entry_t *e = &g_stub_map[i];
        uintptr_t key = __atomic_load_n(&e->fn, __ATOMIC_ACQUIRE);
        if (key == 0) {
            uintptr_t expected = 0;
            if (!__atomic_compare_exchange_n(&e->fn, &expected, fn, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                key = expected;
            } else {
                uint32_t index = __atomic_fetch_add(&g_stub_count, 1, __ATOMIC_RELAXED);
                if (index >= QT_STUB_COUNT) {
                    __atomic_store_n(&e->stub, QT_STUB_NONE, __ATOMIC_RELEASE);
                    return 0;
                }
                __atomic_store_n(&g_stub_fn[index], (qt_fn_t)fn, __ATOMIC_RELAXED);
                __atomic_store_n(&e->stub, index + 1, __ATOMIC_RELEASE);
                return index + 1;
            }
        }
        if (key == fn) {
            uint32_t stub = __atomic_load_n(&e->stub, __ATOMIC_ACQUIRE);
            return stub == QT_STUB_NONE ? 0 : stub;
        }
    }
    return 0;
}

#else
void qt_stubs_init_from_env(void) {}
#endif // QTRACE_LTTNG
