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

unsigned arch_context_backtrace(const struct arch_context *ctx, const void *stack, size_t size,
				uint64_t *pcs, unsigned max)
{
	uint64_t lo = (uint64_t)(uintptr_t)stack, hi = lo + size, rsp = ctx->rsp, rbp;
	unsigned n = 0;

	/* arch_context_switch pushed rbp, rbx, r12-r15 below its return address. */
	if (rsp < lo || rsp + 56 > hi)
		return 0;
	rbp = ((const uint64_t *)(uintptr_t)rsp)[5];
	pcs[n++] = ((const uint64_t *)(uintptr_t)rsp)[6];
	while (n < max && rbp >= lo && rbp + 16 <= hi && !(rbp & 7)) {
		const uint64_t *f = (const uint64_t *)(uintptr_t)rbp;

		if (!f[1])
			break;
		pcs[n++] = f[1];
		if (f[0] <= rbp)
			break; /* frames go up the stack */
		rbp = f[0];
	}
	return n;
}
