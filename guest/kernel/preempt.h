/* SPDX-License-Identifier: MIT */
/*
 * The per-CPU preemption count: nestable; while > 0 the scheduler does not switch away
 * from the running thread. Dropping it to zero reschedules if a switch became due.
 */
#ifndef PLUGVM_KERNEL_PREEMPT_H
#define PLUGVM_KERNEL_PREEMPT_H

#include "kernel/compiler.h"
#include "kernel/cpu.h"

/* Switch threads if one is due and nothing forbids it; defined by the scheduler. */
void preempt_schedule(void);
bool need_resched(void);

/* One instruction on the running CPU's count: safe against migration mid-update. */
static inline int preempt_count(void)
{
	return arch_percpu_read_int(offsetof(struct cpu, preempt_count));
}

static inline void preempt_disable(void)
{
	arch_percpu_add_int(offsetof(struct cpu, preempt_count), 1);
	barrier();
}

static inline void preempt_enable_no_resched(void)
{
	barrier();
	arch_percpu_add_int(offsetof(struct cpu, preempt_count), -1);
}

static inline void preempt_check_resched(void)
{
	if (unlikely(need_resched()) && preempt_count() == 0 && arch_irqs_enabled())
		preempt_schedule();
}

static inline void preempt_enable(void)
{
	preempt_enable_no_resched();
	preempt_check_resched();
}

#endif
