// swift_task_switch, interposed (preloaded shim only; docs/trace-format.md, "Actors"): every
// actor hop and executor switch of compiled Swift code goes through it by the PLT. It uses the
// Swift async calling convention (async context in r14, resume function in rdi, the executor's
// identity and implementation words in rsi and rdx), which C cannot declare with gcc, so the
// entry is assembly: save the argument registers, let qt_actor_hop (C) record the hop and
// return the real function, restore them and jump there with everything as it came.
#if defined(__x86_64__) && defined(QTRACE_PRELOAD)
    .text
    .globl swift_task_switch
    .type swift_task_switch, @function
swift_task_switch:
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
    mov %r14, %rcx              // qt_actor_hop(resume, identity, implementation, context)
    call qt_actor_hop
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
    .size swift_task_switch, .-swift_task_switch
#endif
    .section .note.GNU-stack,"",@progbits
