/* SPDX-License-Identifier: MIT */
/*
 * Interrupt and exception entry: 256 stubs of 16 bytes each (stub N at vector_stubs + 16N)
 * push a zero error code where the CPU pushes none, then the vector, and join trap_common,
 * which saves the general registers as struct trap_frame and calls trap_dispatch(frame).
 * No FPU/SSE state: the kernel is built general-registers-only.
 */
	.section .text
	.balign 16
	.globl vector_stubs
vector_stubs:
	.set vec, 0
	.rept 256
	.balign 16
	.if (vec == 8) || (vec >= 10 && vec <= 14) || (vec == 17) || (vec == 21) || (vec == 29) || (vec == 30)
	.else
	pushq	$0
	.endif
	pushq	$vec
	jmp	trap_common
	.set vec, vec + 1
	.endr

trap_common:
	pushq	%rax
	pushq	%rbx
	pushq	%rcx
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi
	pushq	%rbp
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	cld
	movq	%rsp, %rdi
	call	trap_dispatch
	.globl trap_return
trap_return:
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rbp
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rbx
	popq	%rax
	addq	$16, %rsp
	iretq

	.section .note.GNU-stack, "", @progbits
