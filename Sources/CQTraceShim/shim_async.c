// Swift Concurrency jobs: the task a job belongs to, the code it resumes and its whole async
// stack (layout verified on Swift 6.3.1, x86_64: docs/trace-format.md, "Swift Concurrency").
//
// A job is read before it is handed to libdispatch, while its task is suspended, so its async
// context chain is stable. Each distinct chain is recorded once, as ASYNC_FRAME tree nodes
// (root = the task's entry, leaf = the resume point), and the job's site is keyed by
// (resume code, leaf node): the per-job cost is a bounded walk, a hash and one lookup.
#define _GNU_SOURCE
#include "shim_internal.h"

#include <string.h>

#define QT_JOB_KIND_TASK 0
#define QT_JOB_FLAG_CHILD (1u << 24)
#define QT_TASK_WORD_PARENT 26  // a child task's ChildFragment: the parent AsyncTask
#define QT_ASYNC_DEPTH 32       // deeper chains keep their innermost frames

/// The runtime allocates a task's initial context right after a prefix that ends with
/// asyncEntryPoint, closureContext, errorResult (Swift 6.x Task.cpp: AsyncContextPrefix /
/// FutureAsyncContextPrefix): the entry point is 3 words before the context, its closure 2.
#define QT_CONTEXT_WORD_ENTRY_POINT (-3)
#define QT_CONTEXT_WORD_CLOSURE (-2)
/// Words of a closure context (a Swift heap box: metadata, refcount, captures) searched for
/// the function a thunk entry point forwards to.
#define QT_BOX_FIRST_WORD 2
#define QT_BOX_LAST_WORD 5

static inline int in_concurrency(uintptr_t a) { return a >= g_concurrency_lo && a < g_concurrency_hi; }

static inline int plausible_pointer(uintptr_t p) { return p >= 0x10000 && (p & 7) == 0; }

/// A job's async chain as read from memory: resume function, each caller's continuation, and,
/// when the task's initial context was reached, its entry point and the captured word of its
/// closure context that names the function the entry forwards to (0 when none).
typedef struct {
    uintptr_t raw[QT_ASYNC_DEPTH + 3];
    int count;
    int has_root;
} qt_chain_t;

// ---- which word of an entry point's closure context holds the function it forwards to ----

/// entry → word index + 1 (0: none), learned on the entry's first task. Packed in one word
/// (entry << 8 | index + 1) so that readers never see half an entry.
#define QT_ENTRIES_SIZE 1024
static uint64_t g_entry_words[QT_ENTRIES_SIZE];

/// The function a captured word names: a plain code pointer, or an async function pointer
/// (a relative pointer to the function, in the module's data), else 0.
static uintptr_t function_named_by(uintptr_t w) {
    if (!plausible_pointer(w & ~(uintptr_t)7) || in_concurrency(w)) return 0;
    if (qt_code_address(w)) return w;
    if (!qt_loaded_address(w)) return 0;
    int32_t relative;
    memcpy(&relative, (const void *)w, sizeof relative);
    uintptr_t target = w + (intptr_t)relative;
    return (target != w && !in_concurrency(target) && qt_code_address(target)) ? target : 0;
}

/// The index of the first word of `box` that names a function (0 when none).
static int learn_closure_word(const uint64_t *box) {
    for (int w = QT_BOX_FIRST_WORD; w <= QT_BOX_LAST_WORD; w++)
        if (function_named_by((uintptr_t)box[w])) return w;
    return 0;
}

static int closure_word(uintptr_t entry, const uint64_t *box) {
    size_t i = (size_t)((entry * 0x9E3779B97F4A7C15ull) >> 54) & (QT_ENTRIES_SIZE - 1);
    for (int probe = 0; probe < 16; probe++, i = (i + 1) & (QT_ENTRIES_SIZE - 1)) {
        uint64_t packed = __atomic_load_n(&g_entry_words[i], __ATOMIC_RELAXED);
        if (packed == 0) {
            int word = learn_closure_word(box);
            uint64_t mine = ((uint64_t)entry << 8) | (uint64_t)(word + 1);
            __atomic_compare_exchange_n(&g_entry_words[i], &packed, mine, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
            return word;
        }
        if ((packed >> 8) == (uint64_t)entry) return (int)(packed & 0xFF) - 1;
    }
    return 0;
}

// ---- reading the chain ----

static void read_chain(const uint64_t *job, qt_chain_t *c) {
    c->count = 0;
    c->has_root = 0;
    c->raw[c->count++] = (uintptr_t)job[7];
    uintptr_t ctx = (uintptr_t)job[8];
    for (int level = 0; level < QT_ASYNC_DEPTH && plausible_pointer(ctx); level++) {
        const uint64_t *context = (const uint64_t *)ctx;
        uintptr_t parent = (uintptr_t)context[0];
        if (parent == 0) {
            // The task's initial context: its prefix names the entry point and its closure.
            uintptr_t entry = (uintptr_t)context[QT_CONTEXT_WORD_ENTRY_POINT];
            uintptr_t box = (uintptr_t)context[QT_CONTEXT_WORD_CLOSURE];
            int word = (entry && plausible_pointer(box)) ? closure_word(entry, (const uint64_t *)box) : 0;
            c->raw[c->count++] = entry;
            c->raw[c->count++] = word ? (uintptr_t)((const uint64_t *)box)[word] : 0;
            c->has_root = 1;
            return;
        }
        c->raw[c->count++] = (uintptr_t)context[1];
        ctx = parent;
    }
}

static uint64_t chain_key(const qt_chain_t *c, uintptr_t ra) {
    uint64_t h = 0xcbf29ce484222325ull ^ ra;
    for (int i = 0; i < c->count; i++) h = (h ^ c->raw[i]) * 0x100000001B3ull, h ^= h >> 29;
    return h | 1;  // 0 is "empty"
}

// ---- chain → (code, stack, site), resolved once per distinct chain ----

typedef struct { uint64_t key; uintptr_t code; uint32_t site; } qt_chain_entry_t;
#define QT_CHAINS_SIZE 16384
static qt_chain_entry_t g_chains[QT_CHAINS_SIZE];
static pthread_mutex_t g_chain_lock = PTHREAD_MUTEX_INITIALIZER;

static qt_chain_entry_t *chain_find(uint64_t key) {
    size_t i = (size_t)(key >> 40) & (QT_CHAINS_SIZE - 1);
    for (int probe = 0; probe < 64; probe++, i = (i + 1) & (QT_CHAINS_SIZE - 1)) {
        uint64_t k = __atomic_load_n(&g_chains[i].key, __ATOMIC_ACQUIRE);
        if (k == key) return &g_chains[i];
        if (k == 0) return NULL;
    }
    return NULL;
}

/// The program's frames of a chain, innermost first: runtime code and non-code dropped; the
/// function an entry thunk forwards to placed just inside the entry.
static int chain_frames(const qt_chain_t *c, uintptr_t *frames) {
    int n = 0, plain = c->has_root ? c->count - 2 : c->count;
    for (int i = 0; i < plain; i++)
        if (!in_concurrency(c->raw[i]) && qt_code_address(c->raw[i])) frames[n++] = c->raw[i];
    if (c->has_root) {
        uintptr_t entry = c->raw[c->count - 2];
        uintptr_t forwarded = function_named_by(c->raw[c->count - 1]);
        if (forwarded && (n == 0 || frames[n - 1] != forwarded)) frames[n++] = forwarded;
        if (!in_concurrency(entry) && qt_code_address(entry)) frames[n++] = entry;
    }
    return n;
}

/// Resolves a new chain: its frames become ASYNC_FRAME nodes (root first), its code is the
/// innermost frame, and its site is keyed by (code, leaf node).
static qt_chain_entry_t resolve_chain(qt_thread_t *t, const qt_chain_t *c, uintptr_t ra, uint64_t key) {
    int saved_depth = t->depth;
    t->depth++;  // nothing below may be recorded as the program's own Dispatch use
    uintptr_t frames[QT_ASYNC_DEPTH + 3];
    int n = chain_frames(c, frames);
    uint32_t leaf = 0;
    for (int i = n - 1; i >= 0; i--) leaf = qt_async_frame(t, leaf, frames[i]);
    qt_chain_entry_t out = { key, n ? frames[0] : c->raw[0], 0 };
    if (n) out.site = qt_job_stack_site(t, out.code, leaf, ra);
    pthread_mutex_lock(&g_chain_lock);
    if (!chain_find(key)) {
        size_t i = (size_t)(key >> 40) & (QT_CHAINS_SIZE - 1);
        for (int probe = 0; probe < 64; probe++, i = (i + 1) & (QT_CHAINS_SIZE - 1)) {
            if (g_chains[i].key != 0) continue;
            g_chains[i].code = out.code;
            g_chains[i].site = out.site;
            __atomic_store_n(&g_chains[i].key, key, __ATOMIC_RELEASE);
            break;
        }
    }
    pthread_mutex_unlock(&g_chain_lock);
    t->depth = saved_depth;
    return out;
}

void qt_async_stacks_after_fork_child(void) {
    pthread_mutex_init(&g_chain_lock, NULL);
    memset(g_chains, 0, sizeof g_chains);
    memset(g_entry_words, 0, sizeof g_entry_words);
    qt_thread_t *t = &qt_tls;
    t->chain_key = 0;
}

uint32_t qt_job_site(qt_thread_t *t, const void *job, uintptr_t ra, qt_job_t *out) {
    const uint64_t *words = job;
    uint32_t flags = (uint32_t)words[4];
    out->task_id = (uint32_t)(words[4] >> 32);
    out->kind = flags & 0xFF;
    out->code = 0;
    out->parent = 0;
    // Only a task (kind 0) has the resume words; reading them off an actor's job would read
    // past it. A task without an id is not one this layout knows: leave it anonymous.
    if (out->kind != QT_JOB_KIND_TASK || out->task_id == 0 || g_concurrency_lo == 0) return 0;
    if (flags & QT_JOB_FLAG_CHILD) out->parent = (uintptr_t)words[QT_TASK_WORD_PARENT];
    qt_chain_t chain;
    read_chain(words, &chain);
    uint64_t key = chain_key(&chain, ra);
    if (QT_LIKELY(key == t->chain_key)) {
        out->code = t->chain_code;
        return t->chain_site;
    }
    qt_chain_entry_t *known = chain_find(key);
    qt_chain_entry_t resolved = known ? *known : resolve_chain(t, &chain, ra, key);
    t->chain_key = key;
    t->chain_code = resolved.code;
    t->chain_site = resolved.site;
    out->code = resolved.code;
    return resolved.site;
}
