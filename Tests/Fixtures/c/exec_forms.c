// exec_forms.c: uses Dispatch, then replaces itself through one member of the exec family
// (argv[1]: execl, execlp, execle, execv, execvp, execvpe, execve, fexecve) with a program
// that prints "FORM ran" (sh; env for execle, to show the environment it was given); or
// (vfork) runs that program in a vfork child and goes on.
// The shim wraps each member: the trace must end at the exec, flagged (docs/trace-format.md).
#define _GNU_SOURCE
#include <dispatch/dispatch.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void touch(void *context) { (void)context; }

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: exec_forms FORM\n"); return 2; }
    const char *form = argv[1];
    dispatch_queue_t queue = dispatch_queue_create("fx.c.exec", NULL);
    dispatch_sync_f(queue, NULL, touch);
    char script[64];
    snprintf(script, sizeof script, "echo %s ran", form);
    char *const args[] = { "sh", "-c", script, NULL };
    char *const env[] = { "FORM=execle ran", NULL };
    extern char **environ;
    if (strcmp(form, "execl") == 0) execl("/bin/sh", "sh", "-c", script, (char *)NULL);
    else if (strcmp(form, "execlp") == 0) execlp("sh", "sh", "-c", script, (char *)NULL);
    else if (strcmp(form, "execle") == 0) execle("/usr/bin/env", "env", (char *)NULL, env);
    else if (strcmp(form, "execv") == 0) execv("/bin/sh", args);
    else if (strcmp(form, "execvp") == 0) execvp("sh", args);
    else if (strcmp(form, "execvpe") == 0) execvpe("sh", args, environ);
    else if (strcmp(form, "execve") == 0) execve("/bin/sh", args, environ);
    else if (strcmp(form, "fexecve") == 0) fexecve(open("/bin/sh", O_RDONLY | O_CLOEXEC), args, environ);
    else if (strcmp(form, "vfork") == 0) {
        // The child shares this memory until its execve: it must leave this process's trace
        // alone, which goes on after the child is done.
        pid_t child = vfork();
        if (child == 0) {
            execve("/bin/sh", args, environ);
            _exit(127);
        }
        int status = 0;
        waitpid(child, &status, 0);
        dispatch_sync_f(queue, NULL, touch);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    perror(form);
    return 1;
}
