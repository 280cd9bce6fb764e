// Foundation's run loops (docs/trace-format.md, "Run loops"). On Linux, RunLoop timers and
// `RunLoop.perform` blocks run inside libFoundation's CoreFoundation, not through Dispatch: a
// Timer's closure ran unseen inside the run loop's own item. libFoundation's Swift side calls
// CFRunLoopTimerCreate and CFRunLoopPerformBlock through its PLT (`readelf -r`: JUMP_SLOT
// relocations), so the preloaded shim defines them and forwards to the real ones:
// - a perform block is an item of its run loop: ENQUEUE on the run loop (a QUEUE_INFO of kind
//   4 names it "main run loop" or "run loop"), START and END around the block, which runs
//   inside a wrapper block (CF copies and releases it as it would the user's);
// - a Foundation Timer (its callout is Foundation's __NSFireTimer) gets the shim's callout,
//   which records RUNLOOP_TIMER_FIRE (the fire date CF programmed for this fire) and
//   SOURCE_HANDLER_END around the real one; RUNLOOP_TIMER at creation names its interval and
//   its code: the closure the Timer holds (Timer._fire, read at its field offset).
// __NSFireTimer and the field offset are local symbols of libFoundation's .symtab
// (qt_foundation_symbol: one scan, shared with shim_foundation.c, the first time either needs
// one). Without them, timers run unrecorded and unchanged.
// CF timers with other callouts, and internal CF calls (direct, not through the PLT), are
// not seen.
#define _GNU_SOURCE
#include "shim_internal.h"

#if defined(__x86_64__) && defined(QTRACE_PRELOAD)
#include <dlfcn.h>

typedef void (*qt_cf_timer_callout_t)(void *timer, void *info);
/// CFRunLoopTimerContext.
typedef struct { long version; void *info; const void *(*retain)(const void *); void (*release)(const void *); void *copy_description; } qt_cf_timer_context_t;

/// The real functions and Foundation's local symbols, resolved on the first call.
static struct {
    void (*perform_block)(void *rl, const void *mode, void *block);
    void *(*timer_create)(const void *allocator, double fire_date, double interval, unsigned long flags, long order,
                          qt_cf_timer_callout_t callout, qt_cf_timer_context_t *context);
    void *(*get_main)(void);
    void *(*get_current)(void);
    double (*next_fire_date)(void *timer);
    uintptr_t fire_timer;   // __NSFireTimer's C entry point
    uintptr_t fire_offset;  // the variable that holds Timer._fire's field offset
} cf;
static pthread_once_t g_cf_once = PTHREAD_ONCE_INIT;

static void resolve_cf(void) {
    cf.perform_block = (void (*)(void *, const void *, void *))dlsym(RTLD_NEXT, "CFRunLoopPerformBlock");
    cf.timer_create = (void *(*)(const void *, double, double, unsigned long, long, qt_cf_timer_callout_t,
                                 qt_cf_timer_context_t *))dlsym(RTLD_NEXT, "CFRunLoopTimerCreate");
    cf.get_main = (void *(*)(void))dlsym(RTLD_NEXT, "CFRunLoopGetMain");
    cf.get_current = (void *(*)(void))dlsym(RTLD_NEXT, "CFRunLoopGetCurrent");
    cf.next_fire_date = (double (*)(void *))dlsym(RTLD_NEXT, "CFRunLoopTimerGetNextFireDate");
    if (cf.timer_create && cf.get_current && cf.next_fire_date) {
        cf.fire_timer = qt_foundation_symbol(QT_FND_SYM_FIRE_TIMER);
        cf.fire_offset = qt_foundation_symbol(QT_FND_SYM_FIRE_OFFSET);
    }
}

static inline void resolve(void) {
    qt_resolve();
    pthread_once(&g_cf_once, resolve_cf);
}

/// A CFAbsoluteTime (seconds since 2001) as a dispatch wall time (minus nanoseconds since
/// 1970), the encoding SOURCE_SET_TIMER's start already uses; ~0 (never) when out of range.
static uint64_t dispatch_walltime(double cf_time) {
    double ns = (cf_time + 978307200.0) * 1e9;
    if (!(ns > 0) || ns >= 4.0e18) return ~0ull;
    return 0 - (uint64_t)ns;
}

/// QUEUE_INFO (kind 4) the first time a run loop is seen: it is the queue of its items.
static void note_run_loop(qt_thread_t *t, void *rl) {
    qt_entry_t *e = table_find(g_queues, QT_TABLE_SIZE, (uintptr_t)rl, 1);
    if (!e || (e->a & QT_Q_KNOWN)) return;
    e->b = 0;
    e->a = QT_Q_KNOWN;
    int is_main = cf.get_main && cf.get_main() == rl;
    uint64_t words[1] = { (uint64_t)(uintptr_t)rl };
    qt_thread_t *m = qt_meta_begin(t);
    qt_rec_string(m, QT_QUEUE_INFO, QT_QUEUE_INFO_RUN_LOOP, words, 1, is_main ? "main run loop" : "run loop");
    qt_meta_end(m, t);
}

// ---- perform blocks ----

static void perform_invoke(qt_wrap_t *w) {
    qt_thread_t *t = &qt_tls;
    int saved = t->depth;
    t->depth = 0;
    qt_rec_start(t, QT_KIND_ASYNC, w->id);
    qt_invoke_block(w->inner);
    qt_rec_end(t, w->id);
    t->depth = saved;
}

void CFRunLoopPerformBlock(void *rl, const void *mode, void *block) {
    resolve();
    if (!cf.perform_block) return;
    qt_thread_t *t = &qt_tls;
    void *ra = __builtin_return_address(0);
    if (!rl || !block || !qt_is_user_call(t, ra)) { cf.perform_block(rl, mode, block); return; }
    uint64_t id = qt_next_id(t);
    note_run_loop(t, rl);
    qt_rec_enqueue_site(t, QT_KIND_ASYNC, 0, id, rl, 0, qt_block_site(t, block, ra));
    qt_wrap_t w = make_wrap((void *)perform_invoke, block, NULL, rl, id, 0);
    t->depth++;
    cf.perform_block(rl, mode, &w);  // CF keeps a copy, which retains `block`
    t->depth--;
}

// ---- timers ----

/// The closure a Foundation Timer runs: the function word of its `_fire` property.
static uintptr_t timer_closure(const void *timer_object) {
    if (!cf.fire_offset || !timer_object) return 0;
    uintptr_t offset = *(const uintptr_t *)cf.fire_offset;
    return *(const uintptr_t *)((const char *)timer_object + offset);
}

static void fire_timer(void *timer, void *info) {
    qt_thread_t *t = &qt_tls;
    int saved = t->depth;
    t->depth = 0;
    // Inside the callout, the next fire date is still the one CF programmed for this fire.
    void *rl = cf.get_current();
    int recorded = QT_RECORDING;
    if (recorded) {
        note_run_loop(t, rl);
        qt_rec3(t, QT_RUNLOOP_TIMER_FIRE, 0, 0, (uint64_t)(uintptr_t)timer, (uint64_t)(uintptr_t)rl,
                dispatch_walltime(cf.next_fire_date(timer)));
    }
    ((qt_cf_timer_callout_t)cf.fire_timer)(timer, info);
    if (recorded) qt_rec1(t, QT_SOURCE_HANDLER_END, 0, 0, (uint64_t)(uintptr_t)timer);
    t->depth = saved;
}

void *CFRunLoopTimerCreate(const void *allocator, double fire_date, double interval, unsigned long flags, long order,
                           qt_cf_timer_callout_t callout, qt_cf_timer_context_t *context) {
    resolve();
    if (!cf.timer_create) return NULL;
    qt_thread_t *t = &qt_tls;
    void *ra = __builtin_return_address(0);
    int ours = cf.fire_timer && (uintptr_t)callout == cf.fire_timer && qt_is_user_call(t, ra);
    void *timer = cf.timer_create(allocator, fire_date, interval, flags, order, ours ? fire_timer : callout, context);
    if (!ours || !timer) return timer;
    uintptr_t closure = timer_closure(context ? context->info : NULL);
    uint32_t site = closure ? qt_function_site(t, (void *)closure, ra) : 0;
    uint64_t interval_ns = interval > 0 ? (uint64_t)(interval * 1e9) : 0;
    qt_thread_t *m = qt_meta_begin(t);
    qt_rec4(m, QT_RUNLOOP_TIMER, 0, 0, (uint64_t)(uintptr_t)timer, interval_ns, dispatch_walltime(fire_date), site);
    qt_meta_end(m, t);
    return timer;
}

#endif
