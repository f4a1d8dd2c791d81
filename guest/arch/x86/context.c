// SPDX-License-Identifier: MIT
/* Initial stack of a new thread for arch_context_switch() (see switch.S). */
#include "arch.h"

extern char thread_trampoline[];

void arch_context_init(struct arch_context *ctx, void *stack_top, void (*entry)(void *), void *arg)
{
	/*
	 * 16-byte aligned top, minus the return slot and six saved registers: after the pops
	 * and `ret`, rsp is 16-byte aligned again for the trampoline's call.
	 */
	uint64_t *sp = (uint64_t *)((uintptr_t)stack_top & ~15ul);

	*--sp = (uint64_t)(uintptr_t)thread_trampoline; /* "return" address */
	*--sp = 0; /* rbp */
	*--sp = 0; /* rbx */
	*--sp = (uint64_t)(uintptr_t)entry; /* r12 */
	*--sp = (uint64_t)(uintptr_t)arg; /* r13 */
	*--sp = 0; /* r14 */
	*--sp = 0; /* r15 */
	ctx->rsp = (uint64_t)(uintptr_t)sp;
}
