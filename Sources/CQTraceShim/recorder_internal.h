// The embedded recorder's shared state: the file header, the chunk header and the recorder
// itself, for recorder.c (file, header, chunk claiming) and recorder_ring.c (the flight
// recorder: chunk reuse, the metadata area, snapshots). Not part of the interposer's view.
#ifndef QTRACE_RECORDER_INTERNAL_H
#define QTRACE_RECORDER_INTERNAL_H

#include "recorder.h"

#include <pthread.h>

#define QT_HEADER_SIZE 4096u
#define QT_DEFAULT_CHUNK (64u * 1024u)
#define QT_CHUNK_MAGIC 0x4B484351u
// Header flags: QT_FLAG_* in qtrace_records.h.

/// The header as laid out in docs/trace-format.md.
typedef struct {
    char magic[8];
    uint16_t version_major, version_minor;
    uint32_t header_size;
    uint32_t chunk_size;
    uint32_t ncpu;
    uint64_t pid, ppid;
    uint64_t init_tsc, init_mono_ns, init_realtime_ns;
    uint64_t final_tsc, final_mono_ns;
    uint64_t chunks_allocated;
    uint64_t dropped_events;
    uint64_t main_tid;
    uint64_t flags;
    uint64_t main_queue;
    uint64_t exit_status;
    uint64_t shim_overhead_ns;
    uint64_t tsc_hz;
    uint64_t dropped_enqueue, dropped_start, dropped_end;  // part of dropped_events, by type
    // The flight recorder (format 1.6; 0 in other traces).
    uint64_t ring_bytes;          // the ring's size (its chunks; the metadata area is apart)
    uint64_t metadata_chunks;     // chunks 0..metadata_chunks-1: the metadata area
    uint64_t overwritten_events;  // records lost to chunk reuse
    uint64_t overwritten_chunks;
    uint64_t complete_from_tsc;   // the last overwritten record's TSC: later events are all here
    uint64_t snapshot_tsc;        // a snapshot: when it was asked for
    uint64_t snapshot_reason;     // QT_SNAPSHOT_*
    uint64_t snapshot_count;      // the ring: snapshots written so far; a snapshot: its number
} qt_header_t;

_Static_assert(sizeof(qt_header_t) == 232, "header layout");

typedef struct {
    uint32_t magic;
    uint32_t thread_seq;
    uint64_t tid;
    uint64_t calib_tsc, calib_mono_ns;
    char name[16];
    uint64_t claim_seq;     // ring only: the order chunks were claimed in (reuse breaks file order)
    uint64_t reserved;
} qt_chunk_header_t;

_Static_assert(sizeof(qt_chunk_header_t) == 64, "chunk header layout");

/// The metadata area's chunks carry this tid (-2: no OS thread).
#define QT_METADATA_TID ((uint64_t)(int64_t)-2)

typedef struct {
    pthread_mutex_t lock;
    int state;              // 0 closed, 1 open, -1 failed (do not retry)
    int fd;
    uint8_t *base;          // mapping of max_bytes (only the first file_size bytes are backed)
    uint64_t file_size;     // backed: zeros written and pages mapped
    uint64_t allocated_size; // disk blocks allocated (fallocate), file_size or more
    uint64_t max_bytes;
    uint32_t chunk_size;
    uint32_t generation;
    int full;               // no more chunks: count events as dropped
    uint64_t grow_step;     // QT_GROW_STEP; one chunk once a step did not fit on the disk
    uint64_t drop_reason;   // QT_FLAG_DROPPED_*: set in the header's flags when `full` is set
    qt_header_t *header;
    uint64_t id_counter;
    uint64_t main_queue;
    char path[4096];
} qt_recorder_t;

extern qt_recorder_t g_rec QT_HIDDEN;

uint64_t qt_mono_ns(int clock) QT_HIDDEN;
/// A decimal environment variable, or `fallback` when unset or not a number.
uint64_t qt_env_u64(const char *name, uint64_t fallback) QT_HIDDEN;
/// pwrite until all of `size` is written (EINTR retried); 0 on an error (a full disk).
int qt_pwrite_all(int fd, const void *data, size_t size, off_t at) QT_HIDDEN;
/// Creates `path` without following a symlink there; the descriptor or -1.
int qt_create_trace_file(const char *path) QT_HIDDEN;
/// Writes the calibration pair and tsc_hz of the end of a trace into `h`.
void qt_header_set_end(qt_header_t *h) QT_HIDDEN;
/// Fills a claimed chunk's header for `t` (the magic last).
void qt_chunk_begin(qt_chunk_header_t *c, qt_thread_t *t, uint64_t tid, const char *name) QT_HIDDEN;

// ---- the flight recorder (recorder_ring.c) ----

/// Reads QTRACE_RING_BYTES: whether this process records into a ring (qt_ring_mode).
void qt_ring_init_from_env(void) QT_HIDDEN;
/// Sizes the ring as the file opens (chunk size, the areas, the claim tables); 0: no ring.
int qt_ring_configure(void) QT_HIDDEN;
/// The file size the ring needs (header, metadata area, ring), fixed at open.
uint64_t qt_ring_file_size(void) QT_HIDDEN;
/// After the file is open and backed: the header's ring fields, the snapshot thread.
void qt_ring_opened(void) QT_HIDDEN;
/// Claims a chunk of the ring for `t` (g_rec.lock held): a fresh one, else the oldest one no
/// thread is writing, whose records are counted as overwritten. 0 when none is free.
int qt_ring_claim_locked(qt_thread_t *t) QT_HIDDEN;
/// At exit: keeps the ring as the trace (QTRACE_RING_KEEP_ON_EXIT) or removes it.
void qt_ring_at_exit(void) QT_HIDDEN;
void qt_ring_after_fork_child(void) QT_HIDDEN;

#endif
