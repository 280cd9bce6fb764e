// Public C interface of the qtrace shim, for the QTrace Swift library and for C apps.
// The shim itself interposes libdispatch's exported API; these functions add annotations
// and control to the same trace. All are safe to call when tracing is off (they do nothing).
#ifndef QTRACE_SHIM_H
#define QTRACE_SHIM_H

#include <stdint.h>

#ifndef __clang__
#define _Nullable
#define _Nonnull
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when this process is recording a trace (or will, on its first Dispatch call).
int qtrace_is_enabled(void);

/// Starts recording into `path` (NULL: $QTRACE_OUTPUT or ./qtrace-PID.qtrace) if the process
/// is not recording yet. Returns 0 on success, -1 if a trace could not be opened.
int qtrace_start(const char *_Nullable path);

/// Path of the trace file being written, or NULL. The string stays valid for the process.
const char *_Nullable qtrace_trace_path(void);

/// Records an instant event with a name (like os_signpost's event).
void qtrace_mark(const char *_Nonnull name);

/// Begins a named interval; pass the returned id to qtrace_interval_end.
uint64_t qtrace_interval_begin(const char *_Nonnull name);
void qtrace_interval_end(uint64_t interval_id);

/// Names the calling thread in the trace (does not rename the OS thread).
void qtrace_name_thread(const char *_Nonnull name);

/// Writes the end-of-run calibration and flags; called automatically at exit.
void qtrace_finish(void);

/// Events that could not be recorded so far.
uint64_t qtrace_dropped_events(void);

#ifdef __cplusplus
}
#endif

#endif
