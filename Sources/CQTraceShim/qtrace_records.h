// The record schema of the embedded trace format: the single source of every record type's
// number, its payload words (names, in order), whether a string follows them and whether
// format 1.4 appends an optional site word. recorder.h generates the C enum from it; the Swift
// reader's EventType and RecordLayout (Sources/QTraceFormat) and the record tables of
// docs/trace-format.md are checked against it by Tests/QTraceFormatTests/SchemaTests.swift,
// which parses this list (keep one QT_RECORD(...) per line, in the form below).
//
//   QT_RECORD(NAME, number, payload words, "word,word,...", QT_OPT_SITE | QT_NO_SITE,
//             QT_STRING | QT_NO_STRING)
//
// Every record is word 0 (type, flags8, length, arg) and word 1 (TSC), then the payload words,
// then the optional site word (1.4 records only, counted apart: older records stop before it),
// then the string (u32 length, bytes, padding). Word names are the ones `qtrace dump` prints.
#ifndef QTRACE_RECORDS_H
#define QTRACE_RECORDS_H

/// Whether a record type has format 1.4's optional trailing site word; whether it ends with a
/// string.
#define QT_OPT_SITE 1
#define QT_NO_SITE 0
#define QT_STRING 1
#define QT_NO_STRING 0

#define QT_RECORD_LIST(QT_RECORD) \
    /* Threads */ \
    QT_RECORD(THREAD_START, 1, 1, "creator", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(THREAD_EXIT, 2, 0, "", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(THREAD_NAME, 3, 0, "", QT_NO_SITE, QT_STRING) \
    /* Queues and objects */ \
    QT_RECORD(QUEUE_CREATE, 10, 2, "queue,target", QT_NO_SITE, QT_STRING) \
    QT_RECORD(QUEUE_INFO, 11, 1, "queue", QT_NO_SITE, QT_STRING) \
    QT_RECORD(SET_TARGET, 12, 2, "object,target", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(SUSPEND, 13, 1, "object", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(RESUME, 14, 1, "object", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(ACTIVATE, 15, 1, "object", QT_NO_SITE, QT_NO_STRING) \
    /* Work items */ \
    QT_RECORD(ENQUEUE, 20, 3, "id,queue,extra", QT_OPT_SITE, QT_NO_STRING) \
    QT_RECORD(START, 21, 1, "id", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(END, 22, 1, "id", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(WORKITEM_CREATE, 23, 2, "id,block", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(WORKITEM_PERFORM, 24, 1, "id", QT_NO_SITE, QT_NO_STRING) \
    /* apply / concurrentPerform */ \
    QT_RECORD(APPLY_BEGIN, 25, 3, "id,queue,iterations", QT_OPT_SITE, QT_NO_STRING) \
    QT_RECORD(APPLY_END, 26, 1, "id", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(APPLY_ITER_START, 27, 1, "id", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(APPLY_ITER_END, 28, 1, "id", QT_NO_SITE, QT_NO_STRING) \
    /* Groups */ \
    QT_RECORD(GROUP_CREATE, 30, 1, "group", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(GROUP_ENTER, 31, 1, "group", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(GROUP_LEAVE, 32, 1, "group", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(GROUP_WAIT_BEGIN, 33, 2, "group,timeout", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(GROUP_WAIT_END, 34, 1, "group", QT_OPT_SITE, QT_NO_STRING) \
    /* Semaphores */ \
    QT_RECORD(SEM_CREATE, 40, 2, "sem,value", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(SEM_WAIT_BEGIN, 41, 2, "sem,timeout", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(SEM_WAIT_END, 42, 1, "sem", QT_OPT_SITE, QT_NO_STRING) \
    QT_RECORD(SEM_SIGNAL, 43, 1, "sem", QT_NO_SITE, QT_NO_STRING) \
    /* dispatch_once (1.4): only calls that found the predicate not done yet */ \
    QT_RECORD(ONCE_BEGIN, 45, 1, "predicate", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(ONCE_END, 46, 1, "predicate", QT_OPT_SITE, QT_NO_STRING) \
    /* Sources */ \
    QT_RECORD(SOURCE_CREATE, 50, 4, "source,handle,mask,queue", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(SOURCE_SET_TIMER, 51, 4, "source,start,interval,leeway", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(SOURCE_SET_HANDLER, 52, 1, "source", QT_OPT_SITE, QT_NO_STRING) \
    QT_RECORD(SOURCE_CANCEL, 53, 1, "source", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(SOURCE_HANDLER_BEGIN, 54, 2, "source,data", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(SOURCE_HANDLER_END, 55, 1, "source", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(SOURCE_MERGE_DATA, 56, 2, "source,value", QT_NO_SITE, QT_NO_STRING) \
    /* Dispatch I/O */ \
    QT_RECORD(IO_CREATE, 60, 3, "channel,fd,cleanup", QT_NO_SITE, QT_STRING) \
    QT_RECORD(IO_READ, 61, 4, "channel,op,offset,length", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(IO_WRITE, 62, 4, "channel,op,offset,length", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(IO_HANDLER_BEGIN, 63, 2, "op,bytes", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(IO_HANDLER_END, 64, 1, "op", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(IO_BARRIER, 65, 1, "channel", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(IO_CLOSE, 66, 1, "channel", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(IO_CLEANUP_BEGIN, 67, 1, "cleanup", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(IO_CLEANUP_END, 68, 1, "cleanup", QT_NO_SITE, QT_NO_STRING) \
    /* Annotations (the QTrace API) */ \
    QT_RECORD(MARK, 70, 0, "", QT_NO_SITE, QT_STRING) \
    QT_RECORD(INTERVAL_BEGIN, 71, 1, "interval", QT_NO_SITE, QT_STRING) \
    QT_RECORD(INTERVAL_END, 72, 1, "interval", QT_NO_SITE, QT_NO_STRING) \
    /* Diagnostics raised by the shim */ \
    QT_RECORD(DEADLOCK, 80, 2, "queue,held", QT_NO_SITE, QT_NO_STRING) \
    /* Kernel scheduling (1.3): written by `qtrace record --sched` from perf, never by the shim */ \
    QT_RECORD(SCHED_STATE, 90, 3, "thread,cpu,other", QT_NO_SITE, QT_NO_STRING) \
    /* CPU samples (1.5): written by `qtrace record --cpu` from perf, never by the shim. A */ \
    /* STACK_FRAME is a node of the call tree (arg: its id), a CPU_SAMPLE (arg: Hz) its leaf. */ \
    QT_RECORD(STACK_FRAME, 91, 2, "parent,address", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(CPU_SAMPLE, 92, 3, "thread,stack,cpu", QT_NO_SITE, QT_NO_STRING) \
    /* Code identity (1.4): a site's first use, the module map, Swift Concurrency jobs */ \
    QT_RECORD(SITE, 100, 4, "code,capture,caller,return", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(MODULE, 101, 3, "base,start,end", QT_NO_SITE, QT_STRING) \
    QT_RECORD(BUILD_ID, 102, 1, "base", QT_NO_SITE, QT_STRING) \
    QT_RECORD(JOB, 103, 4, "item,task_address,resume,parent", QT_NO_SITE, QT_NO_STRING) \
    /* A node of the async stacks' tree (1.7; arg: its id): root = a task's entry point, leaf = */ \
    /* a resume point. A job SITE's capture word names its leaf. */ \
    QT_RECORD(ASYNC_FRAME, 104, 2, "parent,address", QT_NO_SITE, QT_NO_STRING) \
    /* Actors (1.7): a swift_task_switch of task `arg` onto an executor (identity 0: the */ \
    /* generic executor), and an actor type's name, once per metadata. */ \
    QT_RECORD(ACTOR_HOP, 105, 4, "executor,implementation,resume,metadata", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(ACTOR_TYPE, 106, 1, "metadata", QT_NO_SITE, QT_STRING) \
    /* Foundation operations (1.8): the Operation a DispatchWorkItem of OperationQueue runs, */ \
    /* when it starts ("Type<TAB>name"), and each operation it depended on. */ \
    QT_RECORD(OPERATION, 107, 2, "id,operation", QT_NO_SITE, QT_STRING) \
    QT_RECORD(OPERATION_DEP, 108, 2, "id,dependency", QT_NO_SITE, QT_NO_STRING) \
    /* Continuations (1.7; arg: task id; flags8: 0 init, 1 await): the continuation's context, */ \
    /* at await its status (0 pending: the task suspends; 2 already resumed), at init its site. */ \
    QT_RECORD(CONTINUATION, 109, 3, "context,status,site", QT_NO_SITE, QT_NO_STRING) \
    /* Foundation run loops (1.7, optional): a Foundation Timer made (interval ns, 0: one-shot; due: its */ \
    /* first fire as a dispatch wall time; site: the closure it runs) and each fire (due: the */ \
    /* date CF programmed for it), which ends with SOURCE_HANDLER_END of the timer. */ \
    QT_RECORD(RUNLOOP_TIMER, 110, 4, "timer,interval,due,site", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(RUNLOOP_TIMER_FIRE, 111, 3, "timer,runloop,due", QT_NO_SITE, QT_NO_STRING) \
    /* Compact forms of ENQUEUE/START/END (1.2) for ids that fit 32 bits (the id is word 0's */ \
    /* arg): 24 + 16 + 16 bytes per item instead of 40 + 24 + 24 (every trace page is fresh */ \
    /* memory to fault in). ENQUEUE_C's word: queue bits 0..55 | kind << 56. */ \
    QT_RECORD(ENQUEUE_C, 120, 1, "queue_kind", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(START_C, 121, 0, "", QT_NO_SITE, QT_NO_STRING) \
    QT_RECORD(END_C, 122, 0, "", QT_NO_SITE, QT_NO_STRING) \
    /* ENQUEUE_C with a code site (1.4): queue bits 0..47 | kind << 48 | site << 52. */ \
    QT_RECORD(ENQUEUE_CS, 123, 1, "queue_kind_site", QT_NO_SITE, QT_NO_STRING)

/// The record types as C constants: QT_THREAD_START = 1, ...
#define QT_RECORD_ENUM_CASE(name, number, words, word_names, site, string) QT_##name = number,
enum { QT_RECORD_LIST(QT_RECORD_ENUM_CASE) };
#undef QT_RECORD_ENUM_CASE

#endif
