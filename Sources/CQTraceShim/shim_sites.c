// Code sites, the module map and Swift Concurrency jobs (shim_sites.h).
//
// Lookups are lock-free; a new site is inserted under a mutex, but everything that can take
// the dynamic loader's lock (dl_iterate_phdr, backtrace's first call loading libgcc_s) runs
// before that mutex is taken: a library constructor enqueuing work while dlopen holds the
// loader lock must not wait for a thread that holds our mutex and waits for the loader.
#define _GNU_SOURCE
#include "shim_internal.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// ---- code ranges: which modules a call-site search skips, which addresses are code ----

typedef struct { uintptr_t lo, hi; } qt_range_t;

#define QT_SKIP_MAX 16
static qt_range_t g_skip[QT_SKIP_MAX];
static int g_skip_count;

static const char *const g_skipped_modules[] = {
    "/libdispatch.so", "/libswiftDispatch.so", "/libswiftCore.so", "/libswift_Concurrency.so",
    "/libBlocksRuntime.so", "/libqtrace-shim", NULL,
};

static int is_skipped_module(const char *name) {
    for (int i = 0; g_skipped_modules[i]; i++)
        if (strstr(name, g_skipped_modules[i])) return 1;
    return 0;
}

static int collect_skip_ranges(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size; (void)data;
    if (!info->dlpi_name || !is_skipped_module(info->dlpi_name)) return 0;
    for (int i = 0; i < info->dlpi_phnum && g_skip_count < QT_SKIP_MAX; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        g_skip[g_skip_count++] = (qt_range_t){ lo, lo + ph->p_memsz };
    }
    return 0;
}

void qt_sites_init(void) {
    if (g_skip_count == 0) dl_iterate_phdr(collect_skip_ranges, NULL);
}

static int in_skipped_code(uintptr_t a) {
    for (int i = 0; i < g_skip_count; i++)
        if (a >= g_skip[i].lo && a < g_skip[i].hi) return 1;
    return 0;
}

// ---- the module map: MODULE + BUILD_ID records, once per loaded module ----

#define QT_SEGMENTS_MAX 8

typedef struct {
    uintptr_t base, lo, hi;     // load bias; lowest and highest mapped address of its PT_LOADs
    uintptr_t exec_lo, exec_hi; // its code
    qt_range_t segments[QT_SEGMENTS_MAX]; // its PT_LOAD segments (readable memory)
    int segment_count;
    char path[512];
    char build_id[72];          // lower-case hex, "" when the module has none
} qt_module_t;

#define QT_MODULES_MAX 1024
static qt_module_t g_scan[QT_MODULES_MAX]; // the latest dl_iterate_phdr scan (under g_scan_lock)
static int g_scan_count;
static qt_range_t g_emitted[QT_MODULES_MAX]; // modules already in the trace (under g_site_lock)
static int g_emitted_count;
static pthread_mutex_t g_scan_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_site_lock = PTHREAD_MUTEX_INITIALIZER;

static void hex_build_id(const ElfW(Phdr) *ph, uintptr_t base, char *out, size_t size) {
    const unsigned char *p = (const unsigned char *)(base + ph->p_vaddr), *end = p + ph->p_memsz;
    out[0] = 0;
    while (p + 12 <= end) {
        uint32_t namesz, descsz, type;
        memcpy(&namesz, p, 4); memcpy(&descsz, p + 4, 4); memcpy(&type, p + 8, 4);
        const unsigned char *name = p + 12, *desc = name + ((namesz + 3) & ~3u);
        if (desc + descsz > end || desc < name) return;
        if (type == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 && memcmp(name, "GNU", 4) == 0) {
            static const char digits[] = "0123456789abcdef";
            size_t n = 0;
            for (uint32_t i = 0; i < descsz && n + 2 < size; i++) {
                out[n++] = digits[desc[i] >> 4];
                out[n++] = digits[desc[i] & 15];
            }
            out[n] = 0;
            return;
        }
        p = desc + ((descsz + 3) & ~3u);
    }
}

typedef struct { qt_module_t *modules; int count; } qt_scan_t;

static int scan_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    qt_scan_t *scan = data;
    if (scan->count >= QT_MODULES_MAX) return 1;
    qt_module_t *m = &scan->modules[scan->count];
    memset(m, 0, sizeof *m);
    m->base = info->dlpi_addr;
    m->lo = UINTPTR_MAX;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_NOTE && m->build_id[0] == 0) hex_build_id(ph, info->dlpi_addr, m->build_id, sizeof m->build_id);
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (lo < m->lo) m->lo = lo;
        if (hi > m->hi) m->hi = hi;
        if (m->segment_count < QT_SEGMENTS_MAX) m->segments[m->segment_count++] = (qt_range_t){ lo, hi };
        if (ph->p_flags & PF_X) {
            if (m->exec_lo == 0 || lo < m->exec_lo) m->exec_lo = lo;
            if (hi > m->exec_hi) m->exec_hi = hi;
        }
    }
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    if (name[0] == 0 && scan->count == 0) {
        // The main program: the loader gives it no name.
        ssize_t n = readlink("/proc/self/exe", m->path, sizeof m->path - 1);
        m->path[n > 0 ? n : 0] = 0;
    } else {
        strncpy(m->path, name, sizeof m->path - 1);
    }
    if (m->path[0] != '/' || m->exec_hi == 0) return 0;  // the vDSO (no file), or no code
    scan->count++;
    return 0;
}

/// Rescans the loaded modules (a library may have been dlopen'ed). The loader's lock is taken
/// without g_scan_lock held (the order loader → ours must stay the only one).
static void rescan_modules(void) {
    qt_scan_t scan = { malloc(sizeof(qt_module_t) * QT_MODULES_MAX), 0 };
    if (!scan.modules) return;
    dl_iterate_phdr(scan_module, &scan);
    pthread_mutex_lock(&g_scan_lock);
    memcpy(g_scan, scan.modules, sizeof(qt_module_t) * (size_t)scan.count);
    g_scan_count = scan.count;
    pthread_mutex_unlock(&g_scan_lock);
    free(scan.modules);
}

static int address_is_code(uintptr_t a) {
    int found = 0;
    pthread_mutex_lock(&g_scan_lock);
    for (int i = 0; i < g_scan_count && !found; i++)
        found = a >= g_scan[i].exec_lo && a < g_scan[i].exec_hi;
    pthread_mutex_unlock(&g_scan_lock);
    return found;
}

/// Whether `a` lies in a loaded segment of a scanned module (memory that can be read).
static int address_is_loaded(uintptr_t a) {
    int found = 0;
    pthread_mutex_lock(&g_scan_lock);
    for (int i = 0; i < g_scan_count && !found; i++)
        for (int k = 0; k < g_scan[i].segment_count && !found; k++)
            found = a >= g_scan[i].segments[k].lo && a + 8 <= g_scan[i].segments[k].hi;
    pthread_mutex_unlock(&g_scan_lock);
    return found;
}

static int emitted(uintptr_t a) {
    for (int i = 0; i < g_emitted_count; i++)
        if (a >= g_emitted[i].lo && a < g_emitted[i].hi) return 1;
    return 0;
}

/// Writes MODULE and BUILD_ID for every scanned module not in the trace yet (g_site_lock held).
static void emit_new_modules(qt_thread_t *t) {
    pthread_mutex_lock(&g_scan_lock);
    for (int i = 0; i < g_scan_count && g_emitted_count < QT_MODULES_MAX; i++) {
        const qt_module_t *m = &g_scan[i];
        if (emitted(m->exec_lo)) continue;
        g_emitted[g_emitted_count++] = (qt_range_t){ m->lo, m->hi };
        uint64_t words[3] = { m->base, m->lo, m->hi };
        qt_thread_t *meta = qt_meta_begin(t);
        qt_rec_string(meta, QT_MODULE, 0, words, 3, m->path);
        if (m->build_id[0]) qt_rec_string(meta, QT_BUILD_ID, 0, words, 1, m->build_id);
        qt_meta_end(meta, t);
    }
    pthread_mutex_unlock(&g_scan_lock);
}

// ---- the call site: the first return address outside Dispatch and the Swift runtime ----

/// `ra` itself when the caller is user code; else the first frame above it outside the
/// skipped modules, found by DWARF unwinding (glibc's backtrace, through libgcc_s).
static uintptr_t find_caller(uintptr_t ra) {
    if (ra && !in_skipped_code(ra)) return ra;
    void *frames[48];
    int n = backtrace(frames, 48);
    int i = 0;
    while (i < n && (uintptr_t)frames[i] != ra) i++;
    if (i == n) i = 0;  // not found (a tail call): search from the top
    for (; i < n; i++) {
        uintptr_t a = (uintptr_t)frames[i];
        if (a == ra || in_skipped_code(a)) continue;
        return a;
    }
    return 0;
}

static uint32_t frame_find(uint32_t parent, uintptr_t address);

/// The call stack above a blocking call: up to `max` return addresses outside the skipped
/// modules, innermost (the caller) first; returns how many. One DWARF unwind: waits that
/// really blocked only, already slower than it (docs/code-identity.md, "Wait stacks").
static int wait_stack(uintptr_t ra, uintptr_t *out, int max) {
    void *frames[64];
    int n = backtrace(frames, 64);
    int i = 0;
    while (i < n && (uintptr_t)frames[i] != ra) i++;
    if (i == n) i = 0;  // not found (a tail call): search from the top
    int count = 0;
    for (; i < n && count < max; i++) {
        uintptr_t a = (uintptr_t)frames[i];
        if (in_skipped_code(a)) continue;
        out[count++] = a;
    }
    return count;
}

// ---- the site table: (code, capture, ra) -> id, lock-free lookups ----

typedef struct { uintptr_t code, capture, ra; uint32_t id; uint32_t is_closure; } qt_site_entry_t;

#define QT_SITES_SIZE 32768
static qt_site_entry_t g_sites[QT_SITES_SIZE];
static uint32_t g_next_site = 1;

static inline size_t site_hash(uintptr_t code, uintptr_t capture, uintptr_t ra) {
    uint64_t h = (code ^ (capture * 0x9E3779B97F4A7C15ull) ^ (ra << 17)) * 0xBF58476D1CE4E5B9ull;
    return (size_t)(h >> 40) & (QT_SITES_SIZE - 1);
}

/// The entry of a known site, or NULL. An entry is published by storing its id last.
static qt_site_entry_t *site_find(uintptr_t code, uintptr_t capture, uintptr_t ra) {
    size_t i = site_hash(code, capture, ra);
    for (int probe = 0; probe < 64; probe++, i = (i + 1) & (QT_SITES_SIZE - 1)) {
        qt_site_entry_t *e = &g_sites[i];
        uint32_t id = __atomic_load_n(&e->id, __ATOMIC_ACQUIRE);
        if (id == 0) return NULL;
        if (e->code == code && e->capture == capture && e->ra == ra) return e;
    }
    return NULL;
}

static void remember(qt_thread_t *t, const qt_site_entry_t *e, uintptr_t capture) {
    t->site_code = e->code;
    t->site_ra = e->ra;
    t->site_capture = capture;
    // Ids stay far below the flag bit (the table holds QT_SITES_SIZE sites).
    t->site = e->id | (e->is_closure ? QT_SITE_CLOSURE : 0);
}

/// Inserts a new site and writes its SITE record (and the modules it needs) unless another
/// thread was first. Returns the site id (0 when the table is full).
static uint32_t site_insert(qt_thread_t *t, unsigned kind, uintptr_t code, uintptr_t capture, uintptr_t ra,
                            uintptr_t caller, int is_closure, qt_site_entry_t **out) {
    pthread_mutex_lock(&g_site_lock);
    qt_site_entry_t *e = site_find(code, capture, ra);
    if (!e) {
        size_t i = site_hash(code, capture, ra);
        for (int probe = 0; probe < 64; probe++, i = (i + 1) & (QT_SITES_SIZE - 1)) {
            if (g_sites[i].id != 0) continue;
            e = &g_sites[i];
            e->code = code; e->capture = capture; e->ra = ra; e->is_closure = (uint32_t)is_closure;
            uint32_t id = g_next_site++;
            if ((code && !emitted(code)) || (caller && !emitted(caller)) || (is_closure && !emitted(capture)))
                emit_new_modules(t);
            qt_thread_t *meta = qt_meta_begin(t);
            qt_rec4(meta, QT_SITE, kind, id, code, capture, caller, ra);
            qt_meta_end(meta, t);
            __atomic_store_n(&e->id, id, __ATOMIC_RELEASE);
            break;
        }
    }
    pthread_mutex_unlock(&g_site_lock);
    *out = e;
    return e ? e->id : 0;
}

void qt_sites_after_fork_child(void) {
    pthread_mutex_init(&g_site_lock, NULL);
    pthread_mutex_init(&g_scan_lock, NULL);
    if (g_next_site > 1) memset(g_sites, 0, sizeof g_sites);  // untouched pages stay untouched
    g_next_site = 1;
    g_emitted_count = 0;
    qt_async_after_fork_child();
    qt_async_stacks_after_fork_child();
    qt_actors_after_fork_child();
    qt_foundation_after_fork_child();
    qt_thread_t *t = &qt_tls;
    t->site_code = t->site_ra = t->site_capture = 0;
    t->site = 0;
}

uint32_t qt_site_lookup(qt_thread_t *t, unsigned code_kind, uintptr_t code, uintptr_t capture, uintptr_t ra) {
    // (Jobs have their own lookup, keyed by their async stack: qt_job_stack_site.)
    // A Swift closure's block (generic thunk + closure) is keyed by its capture; a C block's
    // capture is data (a loop index, say) and must not split its site.
    qt_site_entry_t *e = capture ? site_find(code, capture, ra) : NULL;
    if (!e) e = site_find(code, 0, ra);
    if (QT_LIKELY(e != NULL)) { remember(t, e, capture); return e->id; }

    int saved_depth = t->depth;
    t->depth++;  // nothing below may be recorded as the program's own Dispatch use
    int is_closure = 0;
    if (capture && code_kind == QT_CODE_BLOCK) {
        if (!address_is_code(capture)) rescan_modules();
        is_closure = address_is_code(capture);
    }
    if (!is_closure) capture = 0;
    uintptr_t caller = find_caller(ra);
    if (g_scan_count == 0 || (caller && !address_is_code(caller)) || !address_is_code(code)) rescan_modules();
    uint32_t id = site_insert(t, is_closure ? QT_CODE_SWIFT_CLOSURE : code_kind, code, capture, ra, caller,
                              is_closure, &e);
    t->depth = saved_depth;
    if (e) remember(t, e, capture);
    return id;
}

/// A wait's site is keyed by its caller and the stack above it (a chain of ASYNC_FRAME nodes,
/// its leaf in the SITE record's capture word): a wait inside Foundation (Process.waitUntilExit)
/// is then told apart by who called it, and the analysis names the program's frame.
uint32_t qt_wait_site(qt_thread_t *t, uintptr_t ra) {
    int saved_depth = t->depth;
    t->depth++;
    uintptr_t stack[QT_WAIT_STACK_MAX];
    int n = wait_stack(ra, stack, QT_WAIT_STACK_MAX);
    uintptr_t caller = n > 0 ? stack[0] : 0;
    // The chain's nodes, outermost first; a known stack is found without a lock.
    uint32_t leaf = 0;
    for (int i = n - 1; i >= 0 && n > 1 && (i == n - 1 || leaf != 0); i--) leaf = frame_find(leaf, stack[i]);
    if (n > 1 && leaf == 0) {
        for (int i = 0; i < n; i++)
            if (!address_is_code(stack[i])) { rescan_modules(); break; }
        for (int i = n - 1; i >= 0; i--) leaf = qt_async_frame(t, leaf, stack[i]);
    }
    qt_site_entry_t *e = site_find(0, leaf, caller);
    uint32_t id = e ? e->id : 0;
    if (!e) {
        if (caller && !address_is_code(caller)) rescan_modules();
        id = site_insert(t, QT_CODE_NONE, 0, leaf, caller, caller, 0, &e);
    }
    t->depth = saved_depth;
    return id;
}

// ---- Swift Concurrency: async stacks (shim_async.c) ----

/// A job's site: keyed by (code, async stack, ra); no caller (its submitter is the runtime's
/// scheduler: no call site worth an unwind).
uint32_t qt_job_stack_site(qt_thread_t *t, uintptr_t code, uintptr_t stack, uintptr_t ra) {
    qt_site_entry_t *e = site_find(code, stack, ra);
    if (QT_LIKELY(e != NULL)) return e->id;
    int saved_depth = t->depth;
    t->depth++;
    if (g_scan_count == 0 || !address_is_code(code)) rescan_modules();
    uint32_t id = site_insert(t, QT_CODE_JOB, code, stack, ra, 0, 0, &e);
    t->depth = saved_depth;
    return id;
}

int qt_code_address(uintptr_t a) {
    if (a < 0x10000) return 0;
    if (g_scan_count == 0) rescan_modules();
    if (address_is_code(a)) return 1;
    rescan_modules();  // a library loaded since the last scan
    return address_is_code(a);
}

int qt_loaded_address(uintptr_t a) {
    if (a < 0x10000 || (a & 3)) return 0;
    if (g_scan_count == 0) rescan_modules();
    return address_is_loaded(a);
}

/// Async frame nodes: (parent node, address) -> id, under g_site_lock (new stacks only).
typedef struct { uintptr_t parent, address; uint32_t id; } qt_frame_entry_t;
#define QT_FRAMES_SIZE 16384
static qt_frame_entry_t g_frames[QT_FRAMES_SIZE];
static uint32_t g_next_frame = 1;

static inline size_t frame_hash(uint32_t parent, uintptr_t address) {
    uint64_t h = ((uint64_t)address ^ ((uint64_t)parent * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
    return (size_t)(h >> 40) & (QT_FRAMES_SIZE - 1);
}

/// A known node's id without the lock (0 when new): an entry is published by storing its id last.
static uint32_t frame_find(uint32_t parent, uintptr_t address) {
    size_t i = frame_hash(parent, address);
    for (int probe = 0; probe < 64; probe++, i = (i + 1) & (QT_FRAMES_SIZE - 1)) {
        qt_frame_entry_t *f = &g_frames[i];
        uint32_t id = __atomic_load_n(&f->id, __ATOMIC_ACQUIRE);
        if (id == 0) return 0;
        if (f->parent == parent && f->address == address) return id;
    }
    return 0;
}

uint32_t qt_async_frame(qt_thread_t *t, uint32_t parent, uintptr_t address) {
    uint32_t known = frame_find(parent, address);
    if (QT_LIKELY(known != 0)) return known;
    pthread_mutex_lock(&g_site_lock);
    size_t i = frame_hash(parent, address);
    uint32_t id = 0;
    for (int probe = 0; probe < 64; probe++, i = (i + 1) & (QT_FRAMES_SIZE - 1)) {
        qt_frame_entry_t *f = &g_frames[i];
        if (f->id != 0 && (f->parent != parent || f->address != address)) continue;
        if (f->id == 0) {
            f->parent = parent; f->address = address;
            uint32_t fresh = g_next_frame++;
            if (!emitted(address)) emit_new_modules(t);
            qt_thread_t *meta = qt_meta_begin(t);
            qt_rec2(meta, QT_ASYNC_FRAME, 0, fresh, parent, address);
            qt_meta_end(meta, t);
            __atomic_store_n(&f->id, fresh, __ATOMIC_RELEASE);
        }
        id = f->id;
        break;
    }
    pthread_mutex_unlock(&g_site_lock);
    return id;
}

void qt_async_after_fork_child(void) {
    if (g_next_frame > 1) memset(g_frames, 0, sizeof g_frames);
    g_next_frame = 1;
}
