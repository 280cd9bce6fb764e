// The embedded recorder: the trace file, its header, chunk claiming and growth.
// See recorder.h for the hot path and docs/trace-format.md for the layout.
#define _GNU_SOURCE
#include "recorder_internal.h"
#include "qtrace_shim.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/// The file's blocks are allocated a step ahead of the chunk claims, its zeros written and its
/// pages mapped only a window ahead (extend_to; a benchmark may build other windows).
#define QT_GROW_STEP (4u << 20)
#ifndef QT_BACK_WINDOW
#define QT_BACK_WINDOW (1u << 20)
#endif
#define QT_DEFAULT_MAX_BYTES (4ull << 30)

__thread qt_thread_t qt_tls __attribute__((tls_model("initial-exec")));
int qt_enabled;

qt_recorder_t g_rec = { .lock = PTHREAD_MUTEX_INITIALIZER, .id_counter = 1 };

pid_t qt_gettid(void) { return (pid_t)syscall(SYS_gettid); }

uint64_t qt_mono_ns(int clock) {
    struct timespec ts;
    clock_gettime((clockid_t)clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t qt_next_id_block(void) { return __atomic_fetch_add(&g_rec.id_counter, 1024, __ATOMIC_RELAXED); }

void qt_count_dropped(unsigned type) {
    qt_header_t *h = g_rec.header;
    if (!h) return;
    __atomic_fetch_add(&h->dropped_events, 1, __ATOMIC_RELAXED);
    // Per-type counts let a reader account for every work item: recorded + dropped = submitted.
    if (type == QT_ENQUEUE) __atomic_fetch_add(&h->dropped_enqueue, 1, __ATOMIC_RELAXED);
    else if (type == QT_START) __atomic_fetch_add(&h->dropped_start, 1, __ATOMIC_RELAXED);
    else if (type == QT_END) __atomic_fetch_add(&h->dropped_end, 1, __ATOMIC_RELAXED);
}

void qt_recorder_set_main_queue(uint64_t q) {
    g_rec.main_queue = q;
    if (g_rec.header) g_rec.header->main_queue = q;
}

uint64_t qt_env_u64(const char *name, uint64_t fallback) {
    const char *v = getenv(name);
    if (!v || !*v) return fallback;
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    return (end == v) ? fallback : (uint64_t)x;
}

/// TRACE.PID<suffix>.qtrace beside `out` (TRACE.qtrace).
static void sibling_path(const char *out, const char *suffix) {
    size_t n = strlen(out);
    const char *ext = ".qtrace";
    size_t ne = strlen(ext);
    int has_ext = n > ne && strcmp(out + n - ne, ext) == 0;
    snprintf(g_rec.path, sizeof g_rec.path, "%.*s.%d%s.qtrace", (int)(has_ext ? n - ne : n), out, (int)getpid(), suffix);
}

/// 1 when `path` is a trace this process wrote before it exec'd (this image is a later one).
static int written_before_exec(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    qt_header_t h;
    ssize_t n = pread(fd, &h, sizeof h, 0);
    close(fd);
    return n == (ssize_t)sizeof h && memcmp(h.magic, "QTRACE\0\0", 8) == 0 && h.pid == (uint64_t)getpid()
        && (h.flags & QT_FLAG_EXEC) != 0;
}

/// The root process writes $QTRACE_OUTPUT; any other process (a child, a fork) writes
/// beside it with its pid, so every process gets its own file.
static void choose_path(const char *explicit_path) {
    const char *out = explicit_path ? explicit_path : getenv("QTRACE_OUTPUT");
    const char *root = getenv("QTRACE_ROOT_PPID");
    // Without QTRACE_ROOT_PPID (set by `qtrace record`) QTRACE_OUTPUT names this process's file.
    int is_root = explicit_path != NULL || !root || !*root ||
        ((uint64_t)getppid() == qt_env_u64("QTRACE_ROOT_PPID", 0) && g_rec.generation == 0);
    if (!out || !*out) {
        snprintf(g_rec.path, sizeof g_rec.path, "qtrace-%d.qtrace", (int)getpid());
        return;
    }
    (void)root;
    if (is_root) {
        snprintf(g_rec.path, sizeof g_rec.path, "%s", out);
    } else {
        sibling_path(out, "");
    }
    // An earlier image of this process (before an exec) may have written that file: keep it,
    // and write TRACE.PID.N.qtrace (N = 2, 3...: the image's number) instead.
    for (int image = 2; image < 1000 && written_before_exec(g_rec.path); image++) {
        char suffix[16];
        snprintf(suffix, sizeof suffix, ".%d", image);
        sibling_path(out, suffix);
    }
}

static void read_self(const char *proc_file, char *dst, size_t cap, int nul_to_space) {
    int fd = open(proc_file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = read(fd, dst, cap - 1);
    close(fd);
    if (n <= 0) return;
    dst[n] = 0;
    if (nul_to_space)
        for (ssize_t i = 0; i < n - 1; i++) if (dst[i] == 0) dst[i] = ' ';
}

static void fill_header(void) {
    qt_header_t *h = g_rec.header;
    memcpy(h->magic, "QTRACE\0\0", 8);
    h->version_major = 1;
    // 1.2: compact item records; 1.4: code identity (sites, modules, jobs); 1.6: a ring.
    h->version_minor = 8;  // 1.8: function items without a slot (a ring is 1.6 and later)
    h->header_size = QT_HEADER_SIZE;
    h->chunk_size = g_rec.chunk_size;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    h->ncpu = ncpu > 0 ? (uint32_t)ncpu : 1;
    h->pid = (uint64_t)getpid();
    h->ppid = (uint64_t)getppid();
    h->init_tsc = qt_now();
    h->init_mono_ns = qt_mono_ns(CLOCK_MONOTONIC);
    h->init_realtime_ns = qt_mono_ns(CLOCK_REALTIME);
    h->main_tid = (uint64_t)getpid();
    h->main_queue = g_rec.main_queue;
    char *bytes = (char *)h;
    ssize_t n = readlink("/proc/self/exe", bytes + 256, 255);
    if (n > 0) bytes[256 + n] = 0;
    read_self("/proc/self/cmdline", bytes + 512, 1024, 1);
}

/// The cost of one recorded event, measured once so reports can state the noise floor.
static void measure_overhead(void) {
    uint64_t scratch[3 * 64];
    uint64_t t0 = qt_mono_ns(CLOCK_MONOTONIC);
    for (int round = 0; round < 16; round++)
        for (int i = 0; i < 64; i++) {
            uint64_t *p = &scratch[3 * i];
            p[1] = qt_now(); p[2] = (uint64_t)i;
            __atomic_store_n(p, (uint64_t)i, __ATOMIC_RELEASE);
        }
    uint64_t t1 = qt_mono_ns(CLOCK_MONOTONIC);
    g_rec.header->shim_overhead_ns = (t1 - t0 + 512) / 1024;
}

/// Writes zeros over [from, to). Every iovec points at one zero page: the copy into the page
/// cache reads 4 KiB that stay in the L1 cache instead of streaming a 256 KiB buffer next to
/// the destination (1.1-1.3 against 1.25-1.55 us per 4 KiB page grown, populated and filled).
static int write_zeros(int fd, uint64_t from, uint64_t to) {
    enum { PAGES = 64 };
    static uint8_t zero_page[4096];
    struct iovec iov[PAGES];
    for (int i = 0; i < PAGES; i++) iov[i] = (struct iovec){ zero_page, sizeof zero_page };
    while (from < to) {
        uint64_t n = to - from < PAGES * 4096ull ? to - from : PAGES * 4096ull;
        int count = (int)((n + 4095) / 4096);
        iov[count - 1].iov_len = (size_t)(n - (uint64_t)(count - 1) * 4096);
        ssize_t w = pwritev(fd, iov, count, (off_t)from);
        iov[count - 1].iov_len = 4096;
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return 0;
        from += (uint64_t)w;
    }
    return 1;
}

/// Allocates disk blocks for [from, to) (fallocate): 1, or 0 with errno (EOPNOTSUPP and the
/// like: the file system cannot, and written zeros must reserve the blocks instead).
static int allocate_blocks(int fd, uint64_t from, uint64_t to) {
    int r;
    while ((r = fallocate(fd, 0, (off_t)from, (off_t)(to - from))) != 0 && errno == EINTR) {}
    return r == 0;
}

int qt_pwrite_all(int fd, const void *data, size_t size, off_t at) {
    const uint8_t *p = data;
    while (size > 0) {
        ssize_t w = pwrite(fd, p, size, at);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return 0;
        p += w; size -= (size_t)w; at += w;
    }
    return 1;
}

/// Gives back what a failed step added (a full disk must not stay full of zeros or blocks
/// the trace will not use).
static void trim_to_backed_size(void) {
    while (ftruncate(g_rec.fd, (off_t)g_rec.file_size) != 0 && errno == EINTR) {}
    g_rec.allocated_size = g_rec.file_size;
}

/// Writes zeros over [file_size, size) and maps those pages in with one call (a first touch
/// per page on the hot path would cost a page fault each); 0 when the disk is full.
static int back_pages(uint64_t size) {
    if (!write_zeros(g_rec.fd, g_rec.file_size, size)) return 0;
    madvise(g_rec.base + g_rec.file_size, size - g_rec.file_size, 23 /* MADV_POPULATE_WRITE */);
    g_rec.file_size = size;
    if (g_rec.allocated_size < size) g_rec.allocated_size = size;
    return 1;
}

/// Backs the file up to at least `need` bytes and reserves its blocks up to `size` (a step),
/// so that a full disk fails here and never with a SIGBUS in the traced program; 0 (with the
/// step given back) when the disk is full. The blocks are allocated a step ahead (fallocate:
/// ext4 then writes the zeros into allocated extents without reserving each 4 KiB block for
/// delayed allocation, 0.8-1.05 against 1.1-1.5 us per page; docs/performance.md, "Trace
/// growth"), but the zeros and the pages only a window ahead: the trace's lines are then
/// still in the CPU's caches when the program's threads write their records (a 4 MiB step
/// of zeros has left them by then). fallocate per window instead costs more than it saves
/// (docs/performance.md, run (36)). A file system without fallocate gets the zeros for the whole step.
static int extend_to(uint64_t need, uint64_t size) {
    if (size > g_rec.allocated_size) {
        if (allocate_blocks(g_rec.fd, g_rec.allocated_size, size)) {
            g_rec.allocated_size = size;
        } else if (errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL) {
            g_rec.drop_reason = QT_FLAG_DROPPED_DISK_FULL;
            trim_to_backed_size();
            return 0;
        } else {
            need = size;
        }
    }
    uint64_t window = (need + QT_BACK_WINDOW - 1) / QT_BACK_WINDOW * QT_BACK_WINDOW;
    if (window > size || qt_ring_mode) window = size;
    if (!back_pages(window)) {
        g_rec.drop_reason = QT_FLAG_DROPPED_DISK_FULL;
        trim_to_backed_size();
        return 0;
    }
    return 1;
}

/// Grows the file to hold `need` bytes: a step ahead when it fits, else exactly what is
/// needed (on a nearly full disk the trace keeps recording until the last chunk that fits).
static int grow_file(uint64_t need) {
    if (need <= g_rec.file_size) return 1;
    // Blocks already allocated: the next window. Should its zeros fail all the same, the
    // blocks were given back and the file grows as below.
    if (need <= g_rec.allocated_size && extend_to(need, g_rec.allocated_size)) return 1;
    if (need > g_rec.max_bytes) { g_rec.drop_reason = QT_FLAG_DROPPED_SIZE_CAP; return 0; }
    uint64_t size = (need + g_rec.grow_step - 1) / g_rec.grow_step * g_rec.grow_step;
    if (size > g_rec.max_bytes) size = need;
    if (extend_to(need, size)) return 1;
    if (size == need) return 0;
    // The step did not fit: from now on grow by one chunk at a time (a retried step would
    // write and trim up to the whole free space at every claim).
    g_rec.grow_step = g_rec.chunk_size;
    return extend_to(need, need);
}

/// Creates the trace file without following a symlink at `path` (a link planted there must
/// not make the traced program overwrite its target): a new file under a temporary name
/// beside it (O_EXCL | O_NOFOLLOW), renamed over `path`. Returns the descriptor or -1.
int qt_create_trace_file(const char *path) {
    char temporary[sizeof g_rec.path + 64];
    for (int attempt = 0; attempt < 16; attempt++) {
        int n = snprintf(temporary, sizeof temporary, "%s.tmp-%d-%d", path, (int)getpid(), attempt);
        if (n < 0 || (size_t)n >= sizeof temporary) return -1;
        int fd = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 && errno == EEXIST) continue;
        if (fd < 0) return -1;
        if (rename(temporary, path) != 0) { unlink(temporary); close(fd); return -1; }
        return fd;
    }
    return -1;
}

static int open_locked(const char *explicit_path) {
    if (g_rec.state != 0) return g_rec.state == 1;
    g_rec.state = -1;
    choose_path(explicit_path);
    g_rec.chunk_size = (uint32_t)qt_env_u64("QTRACE_CHUNK_KB", QT_DEFAULT_CHUNK / 1024) * 1024u;
    if (g_rec.chunk_size < 4096 || g_rec.chunk_size % 4096 != 0 || g_rec.chunk_size > (1u << 24))
        g_rec.chunk_size = QT_DEFAULT_CHUNK;
    g_rec.max_bytes = qt_env_u64("QTRACE_MAX_BYTES", QT_DEFAULT_MAX_BYTES);
    if (g_rec.max_bytes < QT_HEADER_SIZE + g_rec.chunk_size) g_rec.max_bytes = QT_HEADER_SIZE + g_rec.chunk_size;
    g_rec.grow_step = QT_GROW_STEP;
    // A ring's file has its final size from the start (it never grows: chunks are reused).
    if (qt_ring_configure()) g_rec.max_bytes = g_rec.grow_step = qt_ring_file_size();
    int fd = qt_create_trace_file(g_rec.path);
    if (fd < 0) return 0;
    // Reserve address space for the largest file; only the grown part is backed.
    void *base = mmap(NULL, g_rec.max_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (base == MAP_FAILED) { close(fd); return 0; }
    g_rec.fd = fd;
    g_rec.base = base;
    g_rec.file_size = 0;
    g_rec.allocated_size = 0;
    if (!grow_file(qt_ring_mode ? g_rec.max_bytes : QT_HEADER_SIZE)) {
        // Not even a header fits: leave no file rather than an unreadable one.
        munmap(base, g_rec.max_bytes);
        close(fd);
        unlink(g_rec.path);
        return 0;
    }
    g_rec.header = (qt_header_t *)base;
    fill_header();
    measure_overhead();
    g_rec.state = 1;
    if (qt_ring_mode) qt_ring_opened();
    return 1;
}

int qt_recorder_open(void) {
    if (QT_LIKELY(g_rec.state == 1)) return 1;
    pthread_mutex_lock(&g_rec.lock);
    int ok = open_locked(NULL);
    pthread_mutex_unlock(&g_rec.lock);
    return ok;
}

void qt_chunk_begin(qt_chunk_header_t *c, qt_thread_t *t, uint64_t tid, const char *name) {
    c->thread_seq = t->chunk_seq++;
    c->tid = tid;
    c->calib_tsc = qt_now();
    c->calib_mono_ns = qt_mono_ns(CLOCK_MONOTONIC);
    if (name) snprintf(c->name, sizeof c->name, "%s", name);
    else prctl(PR_GET_NAME, c->name, 0, 0, 0);
    __atomic_store_n(&c->magic, QT_CHUNK_MAGIC, __ATOMIC_RELEASE);
    t->pos = (uint8_t *)c + sizeof *c;
    t->end = (uint8_t *)c + g_rec.chunk_size;
    t->generation = g_rec.generation;
}

static void claim_chunk_locked(qt_thread_t *t) {
    if (t->tid == 0) t->tid = qt_gettid();
    if (qt_ring_mode) {
        if (!qt_ring_claim_locked(t)) t->pos = t->end = NULL;
        return;
    }
    uint64_t index = g_rec.header->chunks_allocated;
    uint64_t offset = QT_HEADER_SIZE + index * g_rec.chunk_size;
    if (g_rec.full || !grow_file(offset + g_rec.chunk_size)) {
        if (!g_rec.full) __atomic_or_fetch(&g_rec.header->flags, g_rec.drop_reason, __ATOMIC_RELAXED);
        __atomic_store_n(&g_rec.full, 1, __ATOMIC_RELEASE);
        return;
    }
    __atomic_store_n(&g_rec.header->chunks_allocated, index + 1, __ATOMIC_RELEASE);
    qt_chunk_begin((qt_chunk_header_t *)(g_rec.base + offset), t, (uint64_t)t->tid, NULL);
}

uint64_t *qt_reserve_slow(qt_thread_t *t, size_t bytes, unsigned type) {
    if (QT_UNLIKELY(qt_ring_mode) && qt_is_meta_cursor(t)) return qt_meta_reserve_slow(t, bytes, type);
    if (!qt_recorder_open()) return NULL;
    if (g_rec.full) { qt_count_dropped(type); return NULL; }
    pthread_mutex_lock(&g_rec.lock);
    claim_chunk_locked(t);
    pthread_mutex_unlock(&g_rec.lock);
    if (!t->pos || t->pos + bytes > t->end) { qt_count_dropped(type); return NULL; }
    uint64_t *p = (uint64_t *)t->pos;
    t->pos += bytes;
    return p;
}

void qt_rec_string(qt_thread_t *t, unsigned type, uint32_t arg, const uint64_t *words, int nwords, const char *s) {
    size_t len = s ? strlen(s) : 0;
    unsigned flags8 = 0;
    if (len > QT_MAX_STRING) { len = QT_MAX_STRING; flags8 = 0x80; }
    size_t bytes = 16 + 8 * (size_t)nwords + ((4 + len + 7) & ~(size_t)7);
    uint64_t *p = qt_reserve(t, bytes, type);
    if (!p) return;
    p[1] = qt_now();
    for (int i = 0; i < nwords; i++) p[2 + i] = words[i];
    uint8_t *sp = (uint8_t *)(p + 2 + nwords);
    uint32_t len32 = (uint32_t)len;
    memcpy(sp, &len32, 4);
    if (len) memcpy(sp + 4, s, len);
    qt_commit(p, type, flags8, bytes, arg);
}

void qt_recorder_init_from_env(void) {
    if (qt_env_flag("QTRACE_DISABLE")) return;
    qt_ring_init_from_env();
#ifdef QTRACE_PRELOAD
    // Preloaded (LD_PRELOAD=libqtrace-shim.so): the user asked for a trace.
    qt_enabled = 1;
#else
    // Linked into an app through the QTrace library: record only when asked, i.e. under
    // `qtrace record` (QTRACE_OUTPUT set) or after qtrace_start().
    const char *out = getenv("QTRACE_OUTPUT");
    qt_enabled = out && *out;
#endif
}

void qt_recorder_after_fork_child(void) {
    // The child shares the parent's mapping: drop it (without touching the file) and start a
    // trace of its own on its first event.
    qt_thread_t *t = &qt_tls;
    t->pos = t->end = NULL;
    t->chunk_seq = 0;
    t->tid = 0;
    t->held_count = 0;
    t->last_noted_queue = NULL;
    t->last_noted_entry = NULL;
    t->ring_chunk = 0;
    pthread_mutex_init(&g_rec.lock, NULL);
    qt_ring_after_fork_child();
    if (g_rec.state == 1) {
        munmap(g_rec.base, g_rec.max_bytes);
        close(g_rec.fd);
    }
    g_rec.state = 0;
    g_rec.header = NULL;
    g_rec.base = NULL;
    g_rec.full = 0;
    g_rec.generation++;
}

void qt_recorder_exec(int replacing) {
    if (g_rec.state != 1) return;
    if (replacing) {
        qtrace_finish();
        __atomic_or_fetch(&g_rec.header->flags, QT_FLAG_EXEC, __ATOMIC_RELEASE);
    } else {
        __atomic_and_fetch(&g_rec.header->flags, ~(uint64_t)(QT_FLAG_FINALIZED | QT_FLAG_EXEC), __ATOMIC_RELEASE);
    }
}

// ---- public API (qtrace_shim.h) ----

int qtrace_is_enabled(void) { return QT_RECORDING && g_rec.state >= 0; }

int qtrace_start(const char *path) {
    pthread_mutex_lock(&g_rec.lock);
    int ok = open_locked(path);
    pthread_mutex_unlock(&g_rec.lock);
    if (ok) qt_enabled = 1;
    return ok ? 0 : -1;
}

const char *qtrace_trace_path(void) { return g_rec.state == 1 ? g_rec.path : NULL; }

uint64_t qtrace_dropped_events(void) {
    return g_rec.header ? __atomic_load_n(&g_rec.header->dropped_events, __ATOMIC_RELAXED) : 0;
}

void qt_header_set_end(qt_header_t *h) {
    h->final_tsc = qt_now();
    h->final_mono_ns = qt_mono_ns(CLOCK_MONOTONIC);
    if (h->final_mono_ns > h->init_mono_ns && h->final_tsc > h->init_tsc)
        h->tsc_hz = (uint64_t)((double)(h->final_tsc - h->init_tsc) * 1e9 / (double)(h->final_mono_ns - h->init_mono_ns));
}

void qtrace_finish(void) {
    if (g_rec.state != 1) return;
    qt_header_set_end(g_rec.header);
    __atomic_or_fetch(&g_rec.header->flags, QT_FLAG_FINALIZED, __ATOMIC_RELEASE);
    if (qt_ring_mode) qt_ring_at_exit();
}
