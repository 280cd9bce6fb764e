// The `qtrace` tracepoint provider's probes (LTTng build of the shim only: SwiftPM also
// compiles this file, without QTRACE_LTTNG, to nothing).
#ifdef QTRACE_LTTNG
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "qtrace_tp.h"

// Keeps the provider and its tracepoints registered until liblttng-ust itself shuts down.
// The generated destructors unregister them when the shim's destructors run, which is
// before the program's last atexit handlers and while libdispatch workers still run (an I/O
// cleanup handler, the exit event): their records would be lost, whereas the embedded
// recorder keeps them. Registering a second time only raises the reference counts that those
// destructors decrement; liblttng-ust's own exit tears the sessions down safely (RCU).
static void qt_keep_registered_through_exit(void) __attribute__((constructor));
static void qt_keep_registered_through_exit(void) {
    lttng_ust__tracepoints__init();
    lttng_ust__tracepoints__ptrs_init();
    lttng_ust__events_init__qtrace();
}
#endif
