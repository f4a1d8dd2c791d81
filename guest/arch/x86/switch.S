/* SPDX-License-Identifier: MIT */
/*
 * Context switch: push the callee-saved registers, swap stack pointers, pop. A new thread's
 * stack is laid out by arch_context_init() so that the first switch "returns" into
 * thread_trampoline with r12 = entry and r13 = arg.
 */
	.section .text
	.globl arch_context_switch
/* void arch_context_switch(struct arch_context *prev (rdi), struct arch_context *next (rsi)) */
arch_context_switch:
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	movq	%rsp, (%rdi)
	movq	(%rsi), %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret

	.globl thread_trampoline
thread_trampoline:
	xorl	%ebp, %ebp
	movq	%r13, %rdi
	callq	*%r12
	ud2			/* entries never return */

	.section .note.GNU-stack, "", @progbits
