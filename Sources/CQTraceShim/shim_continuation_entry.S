// swift_continuation_init and swift_continuation_await, interposed (preloaded shim only;
// docs/trace-format.md, "Continuations"). Compiled code calls both through the PLT for every
// withCheckedContinuation / withUnsafeContinuation. init is an ordinary Swift-convention call
// (context in rdi, flags in rsi); await uses Swift's async convention (the caller's async
// context in r14, the continuation's context in rdi) and is reached by a tail call. Each entry saves the argument registers, lets the C hook record the
// event and return the real function, restores them and jumps there.
#if defined(__x86_64__) && defined(QTRACE_PRELOAD)
    .text

    .globl swift_continuation_init
    .type swift_continuation_init, @function
swift_continuation_init:
    .cfi_startproc
    push %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    mov %rsp, %rbp
    .cfi_def_cfa_register %rbp
    push %rdi
    push %rsi
    push %rdx
    push %rcx
    push %r8
    push %r9
    and $-16, %rsp
    mov 8(%rbp), %rdx           // qt_continuation_init(context, flags, return address)
    call qt_continuation_init
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
    .size swift_continuation_init, .-swift_continuation_init

    .globl swift_continuation_await
    .type swift_continuation_await, @function
swift_continuation_await:
    .cfi_startproc
    push %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    mov %rsp, %rbp
    .cfi_def_cfa_register %rbp
    push %rdi
    push %rsi
    push %rdx
    push %rcx
    push %r8
    push %r9
    and $-16, %rsp
                                // qt_continuation_await(context): already in rdi
    call qt_continuation_await
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
    .size swift_continuation_await, .-swift_continuation_await
#endif
    .section .note.GNU-stack,"",@progbits
