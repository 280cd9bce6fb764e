// exec(): the process replaces its image. Nothing of the old image runs after a successful
// exec (no atexit handler, no thread exit), so without these wrappers its trace would look
// like a process killed at the end of the recording: unfinished, its lanes running on until
// `qtrace record` finalizes the file. Each wrapper ends the trace here, as an exit would,
// flagged as an exec (docs/trace-format.md, header flags), and reopens it if exec fails.
//
// glibc's exec family calls its internal __execve, not the exported execve, so every member
// is wrapped. posix_spawn (and so system, popen, Foundation's Process) starts a new process
// and leaves the caller's image alone: nothing to do. A vfork child shares the parent's
// memory but is another process: it must not touch the parent's trace (the pid check).
#include "shim_internal.h"

#include <alloca.h>
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

pid_t g_process_pid;

static int owns_trace(void) { return qt_enabled && g_process_pid == getpid(); }

static void before_exec(void) {
    if (owns_trace()) qt_recorder_exec(1);
}

/// exec returned: it failed and the process goes on, with its trace open again.
static int after_failed_exec(int rc) {
    int saved = errno;
    if (owns_trace()) qt_recorder_exec(0);
    errno = saved;
    return rc;
}

int execve(const char *path, char *const argv[], char *const envp[]) {
    qt_resolve();
    before_exec();
    return after_failed_exec(real.execve(path, argv, envp));
}

int execv(const char *path, char *const argv[]) {
    qt_resolve();
    before_exec();
    return after_failed_exec(real.execv(path, argv));
}

int execvp(const char *file, char *const argv[]) {
    qt_resolve();
    before_exec();
    return after_failed_exec(real.execvp(file, argv));
}

int execvpe(const char *file, char *const argv[], char *const envp[]) {
    qt_resolve();
    before_exec();
    return after_failed_exec(real.execvpe(file, argv, envp));
}

int fexecve(int fd, char *const argv[], char *const envp[]) {
    qt_resolve();
    before_exec();
    return after_failed_exec(real.fexecve(fd, argv, envp));
}

// The list forms: the arguments up to the terminating NULL, gathered into an argv on the stack.
#define QT_GATHER_ARGS(first, list, argv)                                   \
    do {                                                                    \
        va_list count_list;                                                 \
        va_copy(count_list, list);                                          \
        size_t n = 1;                                                       \
        while (va_arg(count_list, const char *) != NULL) n++;               \
        va_end(count_list);                                                 \
        argv = alloca((n + 1) * sizeof(char *));                            \
        argv[0] = (char *)(first);                                          \
        for (size_t i = 1; i <= n; i++) argv[i] = va_arg(list, char *);     \
    } while (0)

// execl and execlp: the list form of execv and execvp.
#define QT_EXEC_LIST(name, vector_form)                          \
    int name(const char *path, const char *arg, ...) {           \
        char **argv;                                             \
        va_list list;                                            \
        va_start(list, arg);                                     \
        QT_GATHER_ARGS(arg, list, argv);                         \
        va_end(list);                                            \
        return vector_form(path, argv);                          \
    }

QT_EXEC_LIST(execl, execv)
QT_EXEC_LIST(execlp, execvp)

int execle(const char *path, const char *arg, ...) {
    char **argv;
    va_list list;
    va_start(list, arg);
    QT_GATHER_ARGS(arg, list, argv);
    char *const *envp = va_arg(list, char *const *);  // after the NULL that ends the arguments
    va_end(list);
    return execve(path, argv, envp);
}
