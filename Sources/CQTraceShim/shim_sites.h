// Code identity (docs/trace-format.md, "Code identity"): each distinct (code, call site) pair
// of a process gets a small site id, announced once by a SITE record; item, wait and handler
// records carry the id. The hot path is a compare against the calling thread's last site;
// the shared table and the DWARF unwinding are only reached for a new pair.
#ifndef QTRACE_SHIM_SITES_H
#define QTRACE_SHIM_SITES_H

#include "recorder.h"

/// Words of a Blocks ABI block the site code reads: invoke (offset 16), descriptor (24), and
/// the first captured word (32), which is valid when the descriptor's size says so.
typedef struct { void *isa; int flags; int reserved; void *invoke; const unsigned long *descriptor; uintptr_t capture0; } qt_site_block_t;

/// The site of code run from `ra`'s call (ra: the interposed function's return address).
/// `capture` is the block's first captured word (0 for functions): it names a Swift closure
/// when the invoke is a reabstraction thunk shared by every closure of that type.
QT_HIDDEN uint32_t qt_site_lookup(qt_thread_t *t, unsigned code_kind, uintptr_t code, uintptr_t capture, uintptr_t ra);

/// The site of a blocking call made from `ra` that really blocked: unwinds to the first frame
/// outside Dispatch and the Swift runtime every time (waits are rare and already slow), and
/// keeps up to QT_WAIT_STACK_MAX frames from there up (the SITE's capture: their leaf node).
#define QT_WAIT_STACK_MAX 8
QT_HIDDEN uint32_t qt_wait_site(qt_thread_t *t, uintptr_t ra);

/// What a Swift Concurrency job tells (docs/trace-format.md, "Swift Concurrency jobs").
typedef struct { uint32_t task_id, kind; uintptr_t code, parent; } qt_job_t;

/// For a `dispatch_async_f` from the Swift Concurrency runtime: reads the job (`ctx`) into
/// `out` and returns the site of the code it resumes (0 for an actor's or unknown job).
QT_HIDDEN uint32_t qt_job_site(qt_thread_t *t, const void *job, uintptr_t ra, qt_job_t *out);

/// The site of a job that resumes `code` with async stack `stack` (its leaf ASYNC_FRAME node).
QT_HIDDEN uint32_t qt_job_stack_site(qt_thread_t *t, uintptr_t code, uintptr_t stack, uintptr_t ra);

/// The ASYNC_FRAME node for `address` under `parent` (0: a root), written on first use.
QT_HIDDEN uint32_t qt_async_frame(qt_thread_t *t, uint32_t parent, uintptr_t address);

/// Whether `a` is code of a loaded module; whether it lies in a loaded segment (readable).
/// Both may rescan the modules: slow paths only.
QT_HIDDEN int qt_code_address(uintptr_t a);
QT_HIDDEN int qt_loaded_address(uintptr_t a);

/// A forked child starts with empty async stack tables (its trace announces them again).
QT_HIDDEN void qt_async_after_fork_child(void);
QT_HIDDEN void qt_async_stacks_after_fork_child(void);
QT_HIDDEN void qt_actors_after_fork_child(void);
/// shim_foundation.c: a starting DispatchWorkItem body that runs a Foundation Operation.
QT_HIDDEN void qt_operation_started(qt_thread_t *t, uint64_t id, const void *body);
QT_HIDDEN void qt_foundation_after_fork_child(void);
/// A local symbol of libFoundation (its .symtab, scanned once; 0 when absent): shim_foundation.c.
enum { QT_FND_SYM_SCHEDULE, QT_FND_SYM_SCHEDULE_QOS, QT_FND_SYM_FIRE_TIMER, QT_FND_SYM_FIRE_OFFSET, QT_FND_SYMBOLS };
QT_HIDDEN uintptr_t qt_foundation_symbol(int which);

/// The JOB record of item `id` (written after its ENQUEUE).
static inline void qt_rec_job(qt_thread_t *t, uint64_t id, const void *job, const qt_job_t *info) {
    qt_rec4(t, QT_JOB, info->kind & 0xFF, info->task_id, id, (uint64_t)(uintptr_t)job, info->code, info->parent);
}

/// Code ranges the call-site search skips (libdispatch, the Swift overlay and runtime, the
/// Blocks runtime, the preloaded shim). Called once when the real functions are resolved.
QT_HIDDEN void qt_sites_init(void);

/// A forked child writes a trace of its own: its sites and modules are announced again there
/// (the parent's SITE records are in the parent's file), and the locks start free.
QT_HIDDEN void qt_sites_after_fork_child(void);

/// First captured word of a heap or stack block, 0 when the block captures nothing.
static inline uintptr_t qt_block_capture(const void *block) {
    const qt_site_block_t *b = block;
    return (b->descriptor && b->descriptor[1] >= 40) ? b->capture0 : 0;
}

/// Site of a block submitted from `ra`.
static inline uint32_t qt_block_site(qt_thread_t *t, const void *block, void *ra) {
    const qt_site_block_t *b = block;
    uintptr_t code = (uintptr_t)b->invoke;
    // site_code starts at 0, which no invoke is: no separate "cache valid" test.
    if (QT_LIKELY(code == t->site_code && (uintptr_t)ra == t->site_ra)) {
        uint32_t site = t->site;
        // The same invoke means the same block layout, which held a capture when the site
        // was made: no need to read the descriptor again.
        if (!(site & QT_SITE_CLOSURE)) return site;
        if (b->capture0 == t->site_capture) return site & ~QT_SITE_CLOSURE;
    }
    return qt_site_lookup(t, QT_CODE_BLOCK, code, qt_block_capture(block), (uintptr_t)ra);
}

/// Site of a function (`_f` variants) submitted from `ra`.
static inline uint32_t qt_function_site(qt_thread_t *t, const void *fn, void *ra) {
    if (QT_LIKELY((uintptr_t)fn == t->site_code && (uintptr_t)ra == t->site_ra && !(t->site & QT_SITE_CLOSURE)))
        return t->site;
    return qt_site_lookup(t, QT_CODE_FUNCTION, (uintptr_t)fn, 0, (uintptr_t)ra);
}

#endif
