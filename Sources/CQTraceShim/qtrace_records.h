// The record schema of the embedded trace format, and the values its fields take: the single
// source of every record type's number, its payload words (names, in order), whether a string
// follows them and whether format 1.4 appends an optional site word, and of the value sets
// (item kinds, enqueue flags, ...) that the shim writes and the reader decodes.
//
// Both sides are generated from these lists: the C constants by the X-macro expansions at the
// end of this file, the Swift declarations (EventType, the record layouts, the value enums and
// option sets of QTraceFormat) at build time by Plugins/GenerateRecordSchema, whose strict
// parser stops the build at a line it does not understand. Keep one entry per line, in the
// forms below; a comment line inside a list, or a /* comment */ after an entry, becomes the
// Swift declaration's documentation.
//
//   QT_RECORD(NAME, swiftName, number, payload words, "word,word,...",
//             QT_OPT_SITE | QT_NO_SITE, QT_STRING | QT_NO_STRING)
//   QT_VALUE(QT_C_NAME, swiftName, value)                  value: 12, 0x1F or 1 << 3
//   QT_VALUE_SET(QT_X_LIST, SwiftType, UInt8 | UInt32 | UInt64, QT_ENUM | QT_OPTIONS)
//
// Every record is word 0 (type, flags8, length, arg) and word 1 (TSC), then the payload words,
// then the optional site word (1.4 records only, counted apart: older records stop before it),
// then the string (u32 length, bytes, padding). Word names are the ones `qtrace dump` prints;
// docs/trace-format.md has a row per record (Tests/QTraceFormatTests/SchemaTests.swift checks
// it). Adding a record: docs/trace-format.md, "Adding a record".
#ifndef QTRACE_RECORDS_H
#define QTRACE_RECORDS_H

/// Whether a record type has format 1.4's optional trailing site word; whether it ends with a
/// string.
#define QT_OPT_SITE 1
#define QT_NO_SITE 0
#define QT_STRING 1
#define QT_NO_STRING 0

/// The record types, each decoded into an `Event` of its own type.
#define QT_RECORD_LIST(QT_RECORD) \
    /* Threads */ \
    QT_RECORD(THREAD_START, threadStart, 1, 1, "creator", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(THREAD_EXIT, threadExit, 2, 0, "", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(THREAD_NAME, threadName, 3, 0, "", QT_NO_SITE, QT_STRING) \
    /* Queues and objects */ \
    QT_RECORD(QUEUE_CREATE, queueCreate, 10, 2, "queue,target", QT_NO_SITE, QT_STRING) \
    QT_RECORD(QUEUE_INFO, queueInfo, 11, 1, "queue", QT_NO_SITE, QT_STRING) \
    QT_RECORD(SET_TARGET, setTarget, 12, 2, "object,target", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(SUSPEND, suspend, 13, 1, "object", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(RESUME, resume, 14, 1, "object", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(ACTIVATE, activate, 15, 1, "object", QT_NO_SITE, QT_NO_STRING) \
    /* Work items */ \
    QT_RECORD(ENQUEUE, enqueue, 20, 3, "id,queue,extra", QT_OPT_SITE, QT_NO_STRING) \
    QT_RECORD(START, start, 21, 1, "id", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(END, end, 22, 1, "id", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(WORKITEM_CREATE, workItemCreate, 23, 2, "id,block", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(WORKITEM_PERFORM, workItemPerform, 24, 1, "id", QT_NO_SITE, QT_NO_STRING) \
    /* apply / concurrentPerform */ \
    QT_RECORD(APPLY_BEGIN, applyBegin, 25, 3, "id,queue,iterations", QT_OPT_SITE, QT_NO_STRING) \
    QT_RECORD(APPLY_END, applyEnd, 26, 1, "id", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(APPLY_ITER_START, applyIterStart, 27, 1, "id", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(APPLY_ITER_END, applyIterEnd, 28, 1, "id", QT_NO_SITE, QT_NO_STRING) \
    /* Groups */ \
    QT_RECORD(GROUP_CREATE, groupCreate, 30, 1, "group", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(GROUP_ENTER, groupEnter, 31, 1, "group", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(GROUP_LEAVE, groupLeave, 32, 1, "group", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(GROUP_WAIT_BEGIN, groupWaitBegin, 33, 2, "group,timeout", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(GROUP_WAIT_END, groupWaitEnd, 34, 1, "group", QT_OPT_SITE, QT_NO_STRING) \
    /* DispatchWorkItem.wait() (dispatch_block_wait, 1.7): the work item's id (0: a block the */ \
    /* shim did not see made), the timeout; at the end, arg 1 if it timed out, and its site. */ \
    QT_RECORD(WORKITEM_WAIT_BEGIN, workItemWaitBegin, 35, 2, "id,timeout", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(WORKITEM_WAIT_END, workItemWaitEnd, 36, 1, "id", QT_OPT_SITE, QT_NO_STRING) \
    /* Semaphores */ \
    QT_RECORD(SEM_CREATE, semCreate, 40, 2, "sem,value", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(SEM_WAIT_BEGIN, semWaitBegin, 41, 2, "sem,timeout", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(SEM_WAIT_END, semWaitEnd, 42, 1, "sem", QT_OPT_SITE, QT_NO_STRING) \
    QT_RECORD(SEM_SIGNAL, semSignal, 43, 1, "sem", QT_NO_SITE, QT_NO_STRING) \
    /* dispatch_once (1.4): only calls that found the predicate not done yet */ \
    QT_RECORD(ONCE_BEGIN, onceBegin, 45, 1, "predicate", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(ONCE_END, onceEnd, 46, 1, "predicate", QT_OPT_SITE, QT_NO_STRING) \
    /* Sources */ \
    QT_RECORD(SOURCE_CREATE, sourceCreate, 50, 4, "source,handle,mask,queue", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(SOURCE_SET_TIMER, sourceSetTimer, 51, 4, "source,start,interval,leeway", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(SOURCE_SET_HANDLER, sourceSetHandler, 52, 1, "source", QT_OPT_SITE, QT_NO_STRING) \
    QT_RECORD(SOURCE_CANCEL, sourceCancel, 53, 1, "source", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(SOURCE_HANDLER_BEGIN, sourceHandlerBegin, 54, 2, "source,data", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(SOURCE_HANDLER_END, sourceHandlerEnd, 55, 1, "source", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(SOURCE_MERGE_DATA, sourceMergeData, 56, 2, "source,value", QT_NO_SITE, QT_NO_STRING) \
    /* Dispatch I/O */ \
    QT_RECORD(IO_CREATE, ioCreate, 60, 3, "channel,fd,cleanup", QT_NO_SITE, QT_STRING) \
    QT_RECORD(IO_READ, ioRead, 61, 4, "channel,op,offset,length", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(IO_WRITE, ioWrite, 62, 4, "channel,op,offset,length", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(IO_HANDLER_BEGIN, ioHandlerBegin, 63, 2, "op,bytes", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(IO_HANDLER_END, ioHandlerEnd, 64, 1, "op", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(IO_BARRIER, ioBarrier, 65, 1, "channel", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(IO_CLOSE, ioClose, 66, 1, "channel", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(IO_CLEANUP_BEGIN, ioCleanupBegin, 67, 1, "cleanup", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(IO_CLEANUP_END, ioCleanupEnd, 68, 1, "cleanup", QT_NO_SITE, QT_NO_STRING) \
    /* Annotations (the QTrace API) */ \
    QT_RECORD(MARK, mark, 70, 0, "", QT_NO_SITE, QT_STRING) \
    QT_RECORD(INTERVAL_BEGIN, intervalBegin, 71, 1, "interval", QT_NO_SITE, QT_STRING) \
    QT_RECORD(INTERVAL_END, intervalEnd, 72, 1, "interval", QT_NO_SITE, QT_NO_STRING) \
    /* Diagnostics raised by the shim */ \
    QT_RECORD(DEADLOCK, deadlock, 80, 2, "queue,held", QT_NO_SITE, QT_NO_STRING) \
    /* Kernel scheduling (1.3): written by `qtrace record --sched` from perf, never by the shim */ \
    QT_RECORD(SCHED_STATE, schedState, 90, 3, "thread,cpu,other", QT_NO_SITE, QT_NO_STRING) \
    /* CPU samples (1.5): written by `qtrace record --cpu` from perf, never by the shim. A */ \
    /* STACK_FRAME is a node of the call tree (arg: its id), a CPU_SAMPLE (arg: Hz) its leaf. */ \
    QT_RECORD(STACK_FRAME, stackFrame, 91, 2, "parent,address", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(CPU_SAMPLE, cpuSample, 92, 3, "thread,stack,cpu", QT_NO_SITE, QT_NO_STRING) \
    /* Code identity (1.4): a site's first use, the module map, Swift Concurrency jobs */ \
    QT_RECORD(SITE, site, 100, 4, "code,capture,caller,return", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(MODULE, module, 101, 3, "base,start,end", QT_NO_SITE, QT_STRING) \
    QT_RECORD(BUILD_ID, buildID, 102, 1, "base", QT_NO_SITE, QT_STRING) \
    QT_RECORD(JOB, job, 103, 4, "item,task_address,resume,parent", QT_NO_SITE, QT_NO_STRING) \
    /* A node of the async stacks' tree (1.7; arg: its id): root = a task's entry point, leaf = */ \
    /* a resume point. A job SITE's capture word names its leaf. */ \
    QT_RECORD(ASYNC_FRAME, asyncFrame, 104, 2, "parent,address", QT_NO_SITE, QT_NO_STRING) \
    /* Actors (1.7): a swift_task_switch of task `arg` onto an executor (identity 0: the */ \
    /* generic executor), and an actor type's name, once per metadata. */ \
    QT_RECORD(ACTOR_HOP, actorHop, 105, 4, "executor,implementation,resume,metadata", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(ACTOR_TYPE, actorType, 106, 1, "metadata", QT_NO_SITE, QT_STRING) \
    /* Foundation operations (1.8): the Operation a DispatchWorkItem of OperationQueue runs, */ \
    /* when it starts ("Type<TAB>name"), and each operation it depended on. */ \
    QT_RECORD(OPERATION, operation, 107, 2, "id,operation", QT_NO_SITE, QT_STRING) \
    QT_RECORD(OPERATION_DEP, operationDependency, 108, 2, "id,dependency", QT_NO_SITE, QT_NO_STRING) \
    /* Continuations (1.7; arg: task id; flags8: 0 init, 1 await): the continuation's context, */ \
    /* at await its status (0 pending: the task suspends; 2 already resumed), at init its site. */ \
    QT_RECORD(CONTINUATION, continuation, 109, 3, "context,status,site", QT_NO_SITE, QT_NO_STRING) \
    /* Foundation run loops (1.7, optional): a Foundation Timer made (interval ns, 0: one-shot; due: its */ \
    /* first fire as a dispatch wall time; site: the closure it runs) and each fire (due: the */ \
    /* date CF programmed for it), which ends with SOURCE_HANDLER_END of the timer. */ \
    QT_RECORD(RUNLOOP_TIMER, runLoopTimer, 110, 4, "timer,interval,due,site", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(RUNLOOP_TIMER_FIRE, runLoopTimerFire, 111, 3, "timer,runloop,due", QT_NO_SITE, QT_NO_STRING)

/// The compact forms of ENQUEUE/START/END: record types of their own that the reader decodes
/// into their full forms' events (docs/trace-format.md, "Compact work item records").
#define QT_COMPACT_RECORD_LIST(QT_RECORD) \
    /* Compact forms of ENQUEUE/START/END (1.2) for ids that fit 32 bits (the id is word 0's */ \
    /* arg): 24 + 16 + 16 bytes per item instead of 40 + 24 + 24 (every trace page is fresh */ \
    /* memory to fault in). ENQUEUE_C's word: queue bits 0..55 | kind << 56. */ \
    QT_RECORD(ENQUEUE_C, compactEnqueueType, 120, 1, "queue_kind", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(START_C, compactStartType, 121, 0, "", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(END_C, compactEndType, 122, 0, "", QT_NO_SITE, QT_NO_STRING) \
    /* ENQUEUE_C with a code site (1.4): queue bits 0..47 | kind << 48 | site << 52. */ \
    QT_RECORD(ENQUEUE_CS, compactSiteEnqueueType, 123, 1, "queue_kind_site", QT_NO_SITE, QT_NO_STRING) \
    /* Function items without a context slot (1.8): dispatch_async_f's context passes through */ \
    /* a stub per function (flags8: the stub), so the id is not carried to the item. ENQUEUE_F */ \
    /* is ENQUEUE_CS plus the context; START_F (arg: queue bits 0..31) names what the stub */ \
    /* knows, and the reader pairs it with the oldest pending ENQUEUE_F of the same (stub, */ \
    /* context, queue); END_F (flags8: the stub) closes its thread's innermost open START_F. */ \
    QT_RECORD(ENQUEUE_F, slotlessEnqueueType, 124, 2, "queue_kind_site,context", QT_NO_SITE, QT_NO_STRING) \
    /* START_F's word: the context (bits 0..47) | queue bits 32..47 << 48. */ \
    QT_RECORD(START_F, slotlessStartType, 125, 1, "context_queue", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(END_F, slotlessEndType, 126, 0, "", QT_NO_SITE, QT_NO_STRING)

/// THREAD_START `arg`: which thread it is.
#define QT_THREAD_KIND_LIST(QT_VALUE) \
    QT_VALUE(QT_THREAD_KIND_MAIN, main, 0) \
    QT_VALUE(QT_THREAD_KIND_WORKER, worker, 1) /* A Dispatch worker: libdispatch created it. */ \
    QT_VALUE(QT_THREAD_KIND_OTHER, other, 2) /* Any other thread of a process that traces Dispatch. */

/// QUEUE_INFO `arg` bits 0..7: the queue first seen without its creation.
#define QT_QUEUE_INFO_KIND_LIST(QT_VALUE) \
    QT_VALUE(QT_QUEUE_INFO_MAIN, main, 1) \
    QT_VALUE(QT_QUEUE_INFO_GLOBAL, global, 2) /* A global concurrent (root) queue. */ \
    QT_VALUE(QT_QUEUE_INFO_OTHER, other, 3) \
    QT_VALUE(QT_QUEUE_INFO_RUN_LOOP, runLoop, 4) /* A Foundation run loop: its perform blocks and timers. */

/// SOURCE_SET_HANDLER / SOURCE_HANDLER_BEGIN / SOURCE_HANDLER_END `arg`: which handler.
#define QT_HANDLER_LIST(QT_VALUE) \
    QT_VALUE(QT_HANDLER_EVENT, event, 0) \
    QT_VALUE(QT_HANDLER_CANCEL, cancel, 1) \
    QT_VALUE(QT_HANDLER_REGISTRATION, registration, 2)

/// DEADLOCK `arg`: the call that would wait for the queue its thread is running.
#define QT_DEADLOCK_KIND_LIST(QT_VALUE) \
    /* dispatch_sync onto a queue the thread is running (or a serial queue it targets). */ \
    QT_VALUE(QT_DEADLOCK_SYNC, sync, 1) \
    QT_VALUE(QT_DEADLOCK_APPLY, apply, 2) /* dispatch_apply onto it. */

/// CONTINUATION `flags8`: which step of the continuation the record is.
#define QT_CONTINUATION_STEP_LIST(QT_VALUE) \
    QT_VALUE(QT_CONTINUATION_MADE, made, 0) /* swift_continuation_init: `c` is the call's site. */ \
    QT_VALUE(QT_CONTINUATION_AWAITED, awaited, 1) /* swift_continuation_await: `b` is the status. */

/// SITE flags8: what the site's code address is.
#define QT_CODE_LIST(QT_VALUE) \
    QT_VALUE(QT_CODE_NONE, none, 0) /* No code (a blocking call: only the caller is known). */ \
    QT_VALUE(QT_CODE_BLOCK, block, 1) /* A block's invoke function. */ \
    QT_VALUE(QT_CODE_FUNCTION, function, 2) /* A `_f` function. */ \
    /* A Swift closure: the block's invoke is a reabstraction thunk, `capture` is the closure. */ \
    QT_VALUE(QT_CODE_SWIFT_CLOSURE, swiftClosure, 3) \
    QT_VALUE(QT_CODE_JOB, job, 4) /* A Swift Concurrency job's resume function. */

/// ENQUEUE / START `arg`: how a work item was submitted.
#define QT_KIND_LIST(QT_VALUE) \
    QT_VALUE(QT_KIND_UNKNOWN, unknown, 0) \
    QT_VALUE(QT_KIND_ASYNC, async, 1) \
    QT_VALUE(QT_KIND_SYNC, sync, 2) \
    QT_VALUE(QT_KIND_BARRIER_ASYNC, barrierAsync, 3) \
    QT_VALUE(QT_KIND_BARRIER_SYNC, barrierSync, 4) \
    QT_VALUE(QT_KIND_AFTER, after, 5) \
    QT_VALUE(QT_KIND_GROUP_ASYNC, groupAsync, 6) \
    QT_VALUE(QT_KIND_GROUP_NOTIFY, groupNotify, 7) \
    QT_VALUE(QT_KIND_ASYNC_AND_WAIT, asyncAndWait, 8) \
    QT_VALUE(QT_KIND_BARRIER_ASYNC_AND_WAIT, barrierAsyncAndWait, 9) \
    QT_VALUE(QT_KIND_WORKITEM_NOTIFY, workItemNotify, 10)

/// ENQUEUE `flags8` bits.
#define QT_EF_LIST(QT_VALUE) \
    QT_VALUE(QT_EF_BARRIER, barrier, 1 << 0) \
    QT_VALUE(QT_EF_WORKITEM, workItem, 1 << 1) /* A DispatchWorkItem or dispatch_block_create block. */ \
    QT_VALUE(QT_EF_FUNCTION, function, 1 << 2) /* Submitted with a `_f` function. */ \
    QT_VALUE(QT_EF_CONCURRENCY, swiftConcurrency, 1 << 3) /* A Swift Concurrency job. */

/// ONCE_END `arg`: what the calling thread did in a dispatch_once whose predicate was not done.
#define QT_ONCE_LIST(QT_VALUE) \
    QT_VALUE(QT_ONCE_RAN, ran, 1) /* It ran the initializer. */ \
    QT_VALUE(QT_ONCE_WAITED, waited, 2) /* It waited for another thread's initializer to finish. */

/// SOURCE_CREATE `arg`: the source's type (libdispatch's `_dispatch_source_type_*`).
#define QT_SOURCE_TYPE_LIST(QT_VALUE) \
    QT_VALUE(QT_SOURCE_TYPE_OTHER, other, 0) \
    QT_VALUE(QT_SOURCE_TYPE_TIMER, timer, 1) \
    QT_VALUE(QT_SOURCE_TYPE_READ, read, 2) \
    QT_VALUE(QT_SOURCE_TYPE_WRITE, write, 3) \
    QT_VALUE(QT_SOURCE_TYPE_SIGNAL, signal, 4) \
    QT_VALUE(QT_SOURCE_TYPE_DATA_ADD, dataAdd, 5) \
    QT_VALUE(QT_SOURCE_TYPE_DATA_OR, dataOr, 6) \
    QT_VALUE(QT_SOURCE_TYPE_DATA_REPLACE, dataReplace, 7) \
    QT_VALUE(QT_SOURCE_TYPE_INTERVAL, interval, 8)

/// Header `flags` (docs/trace-format.md, "Header").
#define QT_FLAG_LIST(QT_VALUE) \
    /* The traced process finalized the trace at exit (final_tsc/final_mono_ns are valid). */ \
    QT_VALUE(QT_FLAG_FINALIZED, finalizedByProcess, 1 << 0) \
    /* `qtrace record` finalized the trace after the process ended (exit status is valid). */ \
    QT_VALUE(QT_FLAG_FINALIZED_BY_RECORDER, finalizedByRecorder, 1 << 1) \
    /* Events were dropped because the trace's file system was full. */ \
    QT_VALUE(QT_FLAG_DROPPED_DISK_FULL, droppedDiskFull, 1 << 2) \
    /* Events were dropped because the trace reached its size cap (QTRACE_MAX_BYTES, --max-size). */ \
    QT_VALUE(QT_FLAG_DROPPED_SIZE_CAP, droppedSizeCap, 1 << 3) \
    /* The process replaced its image with exec() where the trace ends (with */ \
    /* finalizedByProcess: the shim finalized it just before the exec). */ \
    QT_VALUE(QT_FLAG_EXEC, replacedByExec, 1 << 4) \
    /* A flight-recorder ring (`qtrace record --ring`): chunks were reused, so older events */ \
    /* were overwritten; chunks are read in claim order. */ \
    QT_VALUE(QT_FLAG_RING, ring, 1 << 5) \
    QT_VALUE(QT_FLAG_SNAPSHOT, snapshot, 1 << 6) /* A snapshot of a ring, copied while the program ran. */ \
    /* Events were dropped because every chunk of the ring was being written (more threads */ \
    /* writing than the ring has chunks). */ \
    QT_VALUE(QT_FLAG_DROPPED_RING_BUSY, droppedRingBusy, 1 << 7)

/// Why a flight-recorder snapshot was taken (the header's snapshot_reason).
#define QT_SNAPSHOT_LIST(QT_VALUE) \
    QT_VALUE(QT_SNAPSHOT_REQUEST, request, 1) \
    QT_VALUE(QT_SNAPSHOT_DEADLOCK, deadlock, 2) \
    QT_VALUE(QT_SNAPSHOT_EXPLOSION, threadExplosion, 3) \
    QT_VALUE(QT_SNAPSHOT_EXIT, exit, 4)

/// The value sets above: (list, Swift type, its raw type, a Swift enum or an OptionSet).
#define QT_VALUE_SET_LIST(QT_VALUE_SET) \
    QT_VALUE_SET(QT_THREAD_KIND_LIST, ThreadStartKind, UInt32, QT_ENUM) \
    QT_VALUE_SET(QT_QUEUE_INFO_KIND_LIST, QueueInfoKind, UInt32, QT_ENUM) \
    QT_VALUE_SET(QT_HANDLER_LIST, SourceHandlerKind, UInt32, QT_ENUM) \
    QT_VALUE_SET(QT_DEADLOCK_KIND_LIST, DeadlockKind, UInt32, QT_ENUM) \
    QT_VALUE_SET(QT_CONTINUATION_STEP_LIST, ContinuationStep, UInt8, QT_ENUM) \
    QT_VALUE_SET(QT_CODE_LIST, SiteCodeKind, UInt8, QT_ENUM) \
    QT_VALUE_SET(QT_KIND_LIST, ItemKind, UInt32, QT_ENUM) \
    QT_VALUE_SET(QT_EF_LIST, EnqueueFlags, UInt8, QT_OPTIONS) \
    QT_VALUE_SET(QT_ONCE_LIST, OnceOutcome, UInt32, QT_ENUM) \
    QT_VALUE_SET(QT_SOURCE_TYPE_LIST, SourceType, UInt32, QT_ENUM) \
    QT_VALUE_SET(QT_FLAG_LIST, TraceHeaderFlags, UInt64, QT_OPTIONS) \
    QT_VALUE_SET(QT_SNAPSHOT_LIST, SnapshotReason, UInt64, QT_ENUM)

/// The record types as C constants: QT_THREAD_START = 1, ..., QT_ENQUEUE_C = 120, ...
#define QT_RECORD_ENUM_CASE(name, swift_name, number, words, word_names, site, string) QT_##name = number,
enum { QT_RECORD_LIST(QT_RECORD_ENUM_CASE) QT_COMPACT_RECORD_LIST(QT_RECORD_ENUM_CASE) };
#undef QT_RECORD_ENUM_CASE

/// The values as C constants: QT_CODE_NONE = 0, ..., QT_EF_BARRIER = 1 << 0, ...
#define QT_VALUE_ENUM_CASE(c_name, swift_name, value) c_name = (value),
#define QT_VALUE_SET_ENUM_CASES(list, swift_type, raw_type, shape) list(QT_VALUE_ENUM_CASE)
enum { QT_VALUE_SET_LIST(QT_VALUE_SET_ENUM_CASES) };
#undef QT_VALUE_SET_ENUM_CASES
#undef QT_VALUE_ENUM_CASE

#endif
