/* SPDX-License-Identifier: MIT */
/*
 * The per-CPU preemption count, as in Linux: bits 0-7 count preempt_disable() nesting,
 * bits 8-15 the softirq-like timer context, bits 16-19 hard interrupts. While the count is
 * non-zero the scheduler does not switch away from the running thread; dropping it to zero
 * reschedules if a switch became due. Every update is one instruction on the running CPU's
 * own count, so a thread cannot migrate between reading and writing it.
 *
 * struct cpu (kernel/cpu.h) starts with: self pointer, preempt_count, need_resched; the
 * offsets below are asserted there.
 */
#ifndef PLUGVM_KERNEL_PREEMPT_H
#define PLUGVM_KERNEL_PREEMPT_H

#include <stdbool.h>

#include "arch.h"
#include "kernel/compiler.h"

#define CPU_OFF_PREEMPT_COUNT 8
#define CPU_OFF_NEED_RESCHED  12

#define PREEMPT_MASK   0x000000ff
#define SOFTIRQ_OFFSET 0x00000100
#define SOFTIRQ_MASK   0x0000ff00
#define HARDIRQ_OFFSET 0x00010000
#define HARDIRQ_MASK   0x000f0000

/* Switch threads now if one is due; called when the count drops to zero. In sched.c. */
void preempt_schedule(void);

static inline int preempt_count(void)
{
	return arch_percpu_read_int(CPU_OFF_PREEMPT_COUNT);
}

static inline bool in_hardirq(void)
{
	return preempt_count() & HARDIRQ_MASK;
}

/* In a hard interrupt or the timer softirq context: no sleeping. */
static inline bool in_interrupt(void)
{
	return preempt_count() & (HARDIRQ_MASK | SOFTIRQ_MASK);
}

static inline bool need_resched(void)
{
	return arch_percpu_read_int(CPU_OFF_NEED_RESCHED) != 0;
}

/* Thread context that may sleep: no preempt count, interrupts on. */
static inline bool preemptible(void)
{
	return preempt_count() == 0 && arch_irqs_enabled();
}

static inline void preempt_count_add(int v)
{
	arch_percpu_add_int(CPU_OFF_PREEMPT_COUNT, v);
	barrier();
}

static inline void preempt_disable(void)
{
	preempt_count_add(1);
}

static inline void preempt_enable_no_resched(void)
{
	barrier();
	arch_percpu_add_int(CPU_OFF_PREEMPT_COUNT, -1);
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
