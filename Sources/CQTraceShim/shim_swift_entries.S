// Swift Concurrency runtime entry points, interposed (preloaded shim only; docs/trace-format.md,
// "Actors" and "Continuations"). Compiled code calls them through the PLT. They use Swift's
// calling conventions, which gcc cannot declare, so each entry is assembly: save the argument
// registers, let a C hook record the event and return the real function, restore the
// registers and jump there with everything as it came (r12..r15, Swift's error, self and
// async-context registers, are callee-saved in C and never touched).
//
//   swift_task_switch (async convention: async context in r14, resume function in rdi, the
//     executor's identity and implementation in rsi and rdx): qt_actor_hop(resume, identity,
//     implementation, context), shim_actors.c.
//   swift_continuation_init (Swift convention: context in rdi, flags in rsi; an ordinary call):
//     qt_continuation_init(context, flags, return address), shim_continuations.c.
//   swift_continuation_await (async convention: the continuation's context in rdi; reached by
//     a tail call): qt_continuation_await(context), shim_continuations.c.
#if defined(__x86_64__) && defined(QTRACE_PRELOAD)
#include "shim_asm_frame.h"
    .text

// QT_INTERPOSE name, hook, setup: `setup` puts the hook's extra argument in place (the six
// argument registers are as the caller left them).
.macro QT_INTERPOSE name, hook, setup
    .globl \name
    .type \name, @function
\name:
    QT_FRAME_ENTER
    push %rdi
    push %rsi
    push %rdx
    push %rcx
    push %r8
    push %r9
    and $-16, %rsp
    \setup
    call \hook
    mov %rax, %r11
    lea -48(%rbp), %rsp
    pop %r9
    pop %r8
    pop %rcx
    pop %rdx
    pop %rsi
    pop %rdi
    pop %rbp
    .cfi_def_cfa %rsp, 8
    jmp *%r11
    .cfi_endproc
    .size \name, .-\name
.endm

    QT_INTERPOSE swift_task_switch, qt_actor_hop, "mov %r14, %rcx"
    QT_INTERPOSE swift_continuation_init, qt_continuation_init, "mov 8(%rbp), %rdx"
    QT_INTERPOSE swift_continuation_await, qt_continuation_await, "nop"
#endif
    .section .note.GNU-stack,"",@progbits
