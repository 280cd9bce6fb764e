// The flight recorder (`qtrace record --ring SIZE`, docs/flight-recorder.md): the trace file
// has a fixed size, and a thread that needs a chunk when every chunk is in use takes the
// oldest one no thread is writing, counting its records as overwritten. A program's events
// thus cost what they cost in a normal recording (the hot path is the same bounds check and
// stores), and the file always holds the most recent SIZE of them, readable after a crash.
// Records that name things for the rest of the run (queue labels, code sites, modules, object
// creation) go to a metadata area at the front that is never overwritten. A snapshot copies
// the file into TRACE.snapshot-N.qtrace, a normal trace: on a signal (`qtrace snapshot PID`),
// at a deadlock the shim detects, at a thread explosion, or (the ring itself) at exit.
#ifndef QTRACE_LTTNG
#define _GNU_SOURCE
#include "recorder_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

int qt_ring_mode;

/// Snapshots the shim takes by itself (deadlocks, explosions) per process: a program that
/// deadlocks in a loop must not fill the disk with copies.
#define QT_MAX_AUTO_SNAPSHOTS 8
#define QT_RING_DEFAULT_CHUNK (16u * 1024u)

static struct {
    uint32_t meta_chunks, ring_chunks; // slots 0..meta_chunks-1: metadata; then the ring
    uint32_t ring_claimed;             // ring slots claimed at least once
    uint32_t *order;                   // ring slots in claim order, oldest at `head` (circular)
    uint32_t head;
    uint8_t *active;                   // per ring slot: a thread is writing it
    uint64_t claim_seq;
    int keep_on_exit;
    int signal;                        // the snapshot signal; 0: none
    // The metadata area: one cursor shared under meta_lock (its records are rare).
    pthread_mutex_t meta_lock;
    qt_thread_t meta;
    pthread_mutex_t snapshot_lock;
    uint32_t meta_claimed;
    // Snapshots: the signal handler and the shim post `wake`; the snapshot thread writes.
    sem_t wake;
    int thread_started;
    unsigned pending;                  // 1 << reason
    uint64_t asked_tsc[8];             // by reason: when the latest one was asked for
    int auto_snapshots;
    int workers, explosion_threshold, explosion_seen;
} g_ring = { .meta_lock = PTHREAD_MUTEX_INITIALIZER, .snapshot_lock = PTHREAD_MUTEX_INITIALIZER };

/// QTRACE_SNAPSHOT_SIGNAL: a number, USR1/USR2 (with or without SIG), or none; USR2 if unset.
static int snapshot_signal(void) {
    const char *v = getenv("QTRACE_SNAPSHOT_SIGNAL");
    if (!v || !*v) return SIGUSR2;
    if (strncasecmp(v, "SIG", 3) == 0) v += 3;
    if (strcasecmp(v, "none") == 0 || strcmp(v, "0") == 0) return 0;
    if (strcasecmp(v, "USR1") == 0) return SIGUSR1;
    if (strcasecmp(v, "USR2") == 0) return SIGUSR2;
    int n = atoi(v);
    return n > 0 && n < 65 && n != SIGKILL && n != SIGSTOP ? n : SIGUSR2;
}

void qt_ring_init_from_env(void) {
    qt_ring_mode = qt_env_u64("QTRACE_RING_BYTES", 0) > 0;
}

int qt_ring_configure(void) {
    if (!qt_ring_mode) return 0;
    uint64_t bytes = qt_env_u64("QTRACE_RING_BYTES", 0);
    if (!getenv("QTRACE_CHUNK_KB")) g_rec.chunk_size = QT_RING_DEFAULT_CHUNK;
    uint64_t chunk = g_rec.chunk_size;
    uint64_t ring = bytes / chunk, meta = (qt_env_u64("QTRACE_RING_METADATA_BYTES", 0) ?: bytes / 4) / chunk;
    // A ring needs a chunk per writing thread and some to reuse; both are capped at 1M chunks.
    if (ring < 8) ring = 8;
    if (meta < 2) meta = 2;
    if (ring > (1u << 20)) ring = 1u << 20;
    if (meta > (1u << 20)) meta = 1u << 20;
    free(g_ring.order);
    free(g_ring.active);
    g_ring.order = calloc(ring, sizeof *g_ring.order);
    g_ring.active = calloc(ring, 1);
    if (!g_ring.order || !g_ring.active) { qt_ring_mode = 0; return 0; }
    g_ring.ring_chunks = (uint32_t)ring;
    g_ring.meta_chunks = (uint32_t)meta;
    g_ring.keep_on_exit = qt_env_flag("QTRACE_RING_KEEP_ON_EXIT");
    g_ring.signal = snapshot_signal();
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1) ncpu = 1;
    // The analysis' threads.explosion threshold (docs/findings.md): max(2 x CPUs, CPUs + 4).
    g_ring.explosion_threshold = (int)(2 * ncpu > ncpu + 4 ? 2 * ncpu : ncpu + 4);
    return 1;
}

uint64_t qt_ring_file_size(void) {
    return QT_HEADER_SIZE + (uint64_t)(g_ring.meta_chunks + g_ring.ring_chunks) * g_rec.chunk_size;
}

static qt_chunk_header_t *slot_chunk(uint32_t slot) {
    return (qt_chunk_header_t *)(g_rec.base + QT_HEADER_SIZE + (uint64_t)slot * g_rec.chunk_size);
}

// ---- chunk reuse ----

/// Counts the records of a chunk about to be reused, and moves the start of the complete
/// window past its last one.
static void count_overwritten(qt_chunk_header_t *c) {
    if (c->magic != QT_CHUNK_MAGIC) return;
    uint8_t *p = (uint8_t *)(c + 1), *end = (uint8_t *)c + g_rec.chunk_size;
    uint64_t records = 0, last_tsc = 0;
    while (p + 16 <= end) {
        uint64_t w0 = __atomic_load_n((uint64_t *)p, __ATOMIC_ACQUIRE);
        size_t length = (size_t)((w0 >> 16) & 0xFFFF);
        if (w0 == 0 || length < 16 || length % 8 != 0 || p + length > end) break;
        records++;
        last_tsc = ((uint64_t *)p)[1];
        p += length;
    }
    qt_header_t *h = g_rec.header;
    h->overwritten_events += records;
    h->overwritten_chunks += 1;
    if (last_tsc > h->complete_from_tsc) h->complete_from_tsc = last_tsc;
}

/// The ring slot to write next: a never-used one, else the oldest one no thread is writing
/// (moved to the newest end of the claim order); -1 when every slot is being written.
static int64_t take_slot(void) {
    uint32_t n = g_ring.ring_chunks;
    if (g_ring.ring_claimed < n) {
        uint32_t slot = g_ring.ring_claimed++;
        g_ring.order[slot] = slot;
        return slot;
    }
    uint32_t k = 0;
    while (k < n && g_ring.active[g_ring.order[(g_ring.head + k) % n]]) k++;
    if (k == n) return -1;
    uint32_t slot = g_ring.order[(g_ring.head + k) % n];
    // The k older slots still being written keep their order, one step on.
    for (uint32_t j = k; j > 0; j--) g_ring.order[(g_ring.head + j) % n] = g_ring.order[(g_ring.head + j - 1) % n];
    g_ring.order[g_ring.head] = slot;
    g_ring.head = (g_ring.head + 1) % n;
    return slot;
}

int qt_ring_claim_locked(qt_thread_t *t) {
    if (t->ring_chunk) g_ring.active[t->ring_chunk - 1] = 0;
    t->ring_chunk = 0;
    int64_t slot = take_slot();
    if (slot < 0) {
        __atomic_or_fetch(&g_rec.header->flags, QT_FLAG_DROPPED_RING_BUSY, __ATOMIC_RELAXED);
        return 0;
    }
    qt_chunk_header_t *c = slot_chunk(g_ring.meta_chunks + (uint32_t)slot);
    count_overwritten(c);
    // A snapshot copying this chunk sees claim_seq change and copies it again (copy_chunk):
    // 0 first, before any of its bytes changes.
    __atomic_store_n(&c->claim_seq, 0, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    // Old records must not show through after the new ones: a reader stops at a zero word.
    memset(c, 0, g_rec.chunk_size);
    __atomic_store_n(&c->claim_seq, ++g_ring.claim_seq, __ATOMIC_RELEASE);
    qt_chunk_begin(c, t, (uint64_t)t->tid, NULL);
    g_ring.active[slot] = 1;
    t->ring_chunk = (uint32_t)slot + 1;
    return 1;
}

void qt_ring_thread_exit(qt_thread_t *t) {
    if (!qt_ring_mode || !t->ring_chunk) return;
    pthread_mutex_lock(&g_rec.lock);
    g_ring.active[t->ring_chunk - 1] = 0;
    t->ring_chunk = 0;
    t->pos = t->end = NULL;
    pthread_mutex_unlock(&g_rec.lock);
}

// ---- the metadata area ----

qt_thread_t *qt_meta_begin_slow(qt_thread_t *t) {
    // The first record of the process may be one of these: the ring opens here then.
    if (!qt_recorder_open()) return t;
    pthread_mutex_lock(&g_ring.meta_lock);
    return &g_ring.meta;
}

void qt_meta_end_slow(void) { pthread_mutex_unlock(&g_ring.meta_lock); }

uint64_t *qt_meta_reserve_slow(qt_thread_t *meta, size_t bytes, unsigned type) {
    if (g_ring.meta_claimed < g_ring.meta_chunks) {
        qt_chunk_header_t *c = slot_chunk(g_ring.meta_claimed++);
        pthread_mutex_lock(&g_rec.lock);
        c->claim_seq = ++g_ring.claim_seq;
        pthread_mutex_unlock(&g_rec.lock);
        qt_chunk_begin(c, meta, QT_METADATA_TID, "[metadata]");
        if (meta->pos + bytes <= meta->end) {
            uint64_t *p = (uint64_t *)meta->pos;
            meta->pos += bytes;
            return p;
        }
    }
    // The area is full: the record goes with the thread's events (and may be overwritten).
    return qt_reserve(&qt_tls, bytes, type);
}

int qt_is_meta_cursor(const qt_thread_t *t) { return t == &g_ring.meta; }

// ---- snapshots ----

/// TRACE.snapshot-N.qtrace beside the ring TRACE.qtrace.
static void snapshot_path(char *out, size_t size, uint64_t number) {
    const char *path = g_rec.path;
    size_t n = strlen(path);
    if (n > 7 && strcmp(path + n - 7, ".qtrace") == 0) n -= 7;
    snprintf(out, size, "%.*s.snapshot-%llu.qtrace", (int)n, path, (unsigned long long)number);
}

/// Copies one chunk into `buffer` as a seqlock reader: a chunk reused while it was copied
/// (its claim_seq changed, or was 0: being zeroed) is copied again, and after a few attempts
/// left out (zeros: an unwritten chunk to readers). Its lost records are counted in the
/// header's overwritten_events like any reuse.
static void copy_chunk(uint32_t slot, uint8_t *buffer) {
    const qt_chunk_header_t *c = slot_chunk(slot);
    for (int attempt = 0; attempt < 4; attempt++) {
        uint64_t before = __atomic_load_n(&c->claim_seq, __ATOMIC_ACQUIRE);
        memcpy(buffer, c, g_rec.chunk_size);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        uint64_t after = __atomic_load_n(&c->claim_seq, __ATOMIC_ACQUIRE);
        if (before == after && (before != 0 || ((const qt_chunk_header_t *)buffer)->magic == 0)) return;
    }
    memset(buffer, 0, g_rec.chunk_size);
}

/// Copies the file into a new trace without stopping the program: chunk claims go on (each
/// chunk is copied as a seqlock reader, above), threads go on writing into their current
/// chunks, and a record published while its chunk was copied is either whole or not there
/// (word 0 is stored last). The header is copied last, so its counters cover every reuse
/// the copy may have missed.
static void write_snapshot(unsigned reason, uint64_t asked_tsc) {
    if (g_rec.state != 1) return;
    pthread_mutex_lock(&g_ring.snapshot_lock);  // one snapshot at a time, numbered in order
    qt_header_t *live = g_rec.header;
    uint64_t number = __atomic_load_n(&live->snapshot_count, __ATOMIC_ACQUIRE) + 1;
    char path[sizeof g_rec.path + 32];
    snapshot_path(path, sizeof path, number);
    int fd = qt_create_trace_file(path);
    uint8_t *buffer = malloc(g_rec.chunk_size);
    if (fd >= 0 && buffer) {
        int ok = 1;
        uint32_t chunks = g_ring.meta_chunks + g_ring.ring_chunks;
        for (uint32_t slot = 0; ok && slot < chunks; slot++) {
            copy_chunk(slot, buffer);
            ok = qt_pwrite_all(fd, buffer, g_rec.chunk_size, (off_t)(QT_HEADER_SIZE + (uint64_t)slot * g_rec.chunk_size));
        }
        static uint8_t header[QT_HEADER_SIZE];
        pthread_mutex_lock(&g_rec.lock);  // the counters as one consistent set
        memcpy(header, live, QT_HEADER_SIZE);
        pthread_mutex_unlock(&g_rec.lock);
        qt_header_t *h = (qt_header_t *)header;
        qt_header_set_end(h);  // after the copy: the snapshot's events end by then
        h->flags |= QT_FLAG_FINALIZED | QT_FLAG_SNAPSHOT;
        h->snapshot_reason = reason;
        h->snapshot_tsc = asked_tsc;
        h->snapshot_count = number;
        ok = ok && qt_pwrite_all(fd, header, QT_HEADER_SIZE, 0);
        close(fd);
        if (ok) __atomic_store_n(&live->snapshot_count, number, __ATOMIC_RELEASE);
        else unlink(path);  // a full disk: no half snapshot
    } else if (fd >= 0) {
        close(fd);
        unlink(path);
    }
    free(buffer);
    pthread_mutex_unlock(&g_ring.snapshot_lock);
}

static void *snapshot_thread(void *unused) {
    (void)unused;
    // Signals stay unblocked: a crash handler (Swift's backtracer) must be able to suspend
    // this thread like any other.
    prctl(PR_SET_NAME, "qtrace-snapshot", 0, 0, 0);
    for (;;) {
        while (sem_wait(&g_ring.wake) != 0)
            if (errno != EINTR) return NULL;
        unsigned pending = __atomic_load_n(&g_ring.pending, __ATOMIC_ACQUIRE);
        // An explosion is a finding once it lasts (Thresholds.threadExplosionMinNs, 100 ms):
        // the snapshot waits that long so that it shows it.
        if (pending & (1u << QT_SNAPSHOT_EXPLOSION)) {
            struct timespec wait = { 0, 250 * 1000 * 1000 };
            while (nanosleep(&wait, &wait) != 0 && errno == EINTR) {}
        }
        pending = __atomic_exchange_n(&g_ring.pending, 0, __ATOMIC_ACQ_REL);
        for (unsigned reason = 1; reason < 8; reason++)
            if (pending & (1u << reason)) write_snapshot(reason, g_ring.asked_tsc[reason]);
    }
    return NULL;
}

void qt_snapshot_request(unsigned reason) {
    if (!qt_ring_mode || !g_ring.thread_started || reason >= 8) return;
    if (reason != QT_SNAPSHOT_REQUEST && __atomic_fetch_add(&g_ring.auto_snapshots, 1, __ATOMIC_RELAXED) >= QT_MAX_AUTO_SNAPSHOTS) return;
    g_ring.asked_tsc[reason] = qt_now();
    __atomic_or_fetch(&g_ring.pending, 1u << reason, __ATOMIC_RELEASE);
    sem_post(&g_ring.wake);  // async-signal-safe
}

void qt_snapshot_now(unsigned reason) {
    if (!qt_ring_mode || __atomic_fetch_add(&g_ring.auto_snapshots, 1, __ATOMIC_RELAXED) >= QT_MAX_AUTO_SNAPSHOTS) return;
    write_snapshot(reason, qt_now());
}

void qt_ring_workers_changed(int delta) {
    if (!qt_ring_mode) return;
    int alive = __atomic_add_fetch(&g_ring.workers, delta, __ATOMIC_RELAXED);
    if (delta > 0 && alive >= g_ring.explosion_threshold && !__atomic_exchange_n(&g_ring.explosion_seen, 1, __ATOMIC_RELAXED))
        qt_snapshot_request(QT_SNAPSHOT_EXPLOSION);
}

static void on_snapshot_signal(int sig) {
    (void)sig;
    int saved = errno;
    qt_snapshot_request(QT_SNAPSHOT_REQUEST);
    errno = saved;
}

/// The snapshot signal's handler, unless the program handles (or ignores) that signal itself:
/// a traced program must behave as without qtrace.
static void install_signal_handler(void) {
    if (g_ring.signal == 0) return;
    struct sigaction old;
    if (sigaction(g_ring.signal, NULL, &old) != 0) return;
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == on_snapshot_signal) return;
    if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) {
        char msg[160];
        int n = snprintf(msg, sizeof msg, "qtrace: signal %d is the program's own: snapshots by signal are off (--snapshot-signal)\n", g_ring.signal);
        if (n > 0) { ssize_t w = write(2, msg, (size_t)n); (void)w; }
        return;
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_snapshot_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(g_ring.signal, &action, NULL);
}

void qt_ring_opened(void) {
    qt_header_t *h = g_rec.header;
    h->flags |= QT_FLAG_RING;
    h->ring_bytes = (uint64_t)g_ring.ring_chunks * g_rec.chunk_size;
    h->metadata_chunks = g_ring.meta_chunks;
    __atomic_store_n(&h->chunks_allocated, (uint64_t)g_ring.meta_chunks + g_ring.ring_chunks, __ATOMIC_RELEASE);
    if (sem_init(&g_ring.wake, 0, 0) != 0) return;
    // The snapshot thread is the shim's, not the program's: created past the interposer.
    int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
        (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(RTLD_NEXT, "pthread_create");
    pthread_t thread;
    if (!create || create(&thread, NULL, snapshot_thread, NULL) != 0) return;
    pthread_detach(thread);
    g_ring.thread_started = 1;
    install_signal_handler();
}

void qt_ring_at_exit(void) {
    qt_header_t *h = g_rec.header;
    if (g_ring.keep_on_exit) {
        h->snapshot_reason = QT_SNAPSHOT_EXIT;
        h->snapshot_tsc = h->final_tsc;
    } else {
        // A flight recorder keeps nothing of a run that ended well unless asked.
        unlink(g_rec.path);
    }
}

void qt_ring_after_fork_child(void) {
    // The child records into a ring of its own once it records (qt_ring_configure again).
    g_ring.ring_claimed = g_ring.head = 0;
    g_ring.claim_seq = 0;
    pthread_mutex_init(&g_ring.meta_lock, NULL);
    pthread_mutex_init(&g_ring.snapshot_lock, NULL);
    memset(&g_ring.meta, 0, sizeof g_ring.meta);
    g_ring.meta_claimed = 0;
    g_ring.thread_started = 0;
    g_ring.pending = 0;
    g_ring.auto_snapshots = 0;
    g_ring.workers = 0;
    g_ring.explosion_seen = 0;
}
#endif
