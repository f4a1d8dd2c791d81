/* SPDX-License-Identifier: MIT */
/*
 * struct cpu: everything one CPU owns, reached through this_cpu() (GS base on x86).
 * Possible CPUs are numbered 0.. in MADT order with the boot CPU as 0; their APIC IDs are
 * known from boot; a struct cpu exists only while the CPU is being brought up or online.
 */
#ifndef PLUGVM_KERNEL_CPU_H
#define PLUGVM_KERNEL_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "arch.h"
#include "kernel/cpumask.h"
#include "kernel/hrtimer.h"
#include "kernel/lockdep.h"
#include "kernel/preempt.h"
#include "kernel/sched_rq.h"
#include "kernel/timer.h"

struct cpu {
	struct cpu *self; /* must stay first: this_cpu() reads it */
	int preempt_count; /* see preempt.h; only this CPU writes it */
	int need_resched; /* set by wake-ups, cleared by schedule() */
	unsigned id;
	uint32_t apic_id;
	int dying; /* its hotplug thread tore it down: the idle loop reports it dead */
	struct rq rq; /* the run queue; its local_lock guards it */
	struct hrtimer_base hrt; /* high-resolution timers */
	struct timer_base tmr; /* timer wheels and the tick */
	struct lockdep_task irq_lockdep; /* held locks of interrupt context on this CPU */
	struct arch_cpu arch;
};

_Static_assert(__builtin_offsetof(struct cpu, self) == 0, "this_cpu() reads %gs:0");
_Static_assert(__builtin_offsetof(struct cpu, preempt_count) == CPU_OFF_PREEMPT_COUNT, "");
_Static_assert(__builtin_offsetof(struct cpu, need_resched) == CPU_OFF_NEED_RESCHED, "");

/* Possible CPUs and their APIC IDs (from the MADT). Written at boot only. */
extern unsigned nr_cpu_ids; /* number of possible CPUs */
extern uint32_t cpu_apic_ids[NR_CPUS];
extern struct cpu *cpu_table[NR_CPUS]; /* NULL while a CPU has no struct cpu */

extern struct cpumask cpu_possible_mask;
extern struct cpumask cpu_present_mask;
extern struct cpumask cpu_online_mask;

/* Logical CPU number of `apic_id`, or -1. */
int cpu_from_apic_id(uint32_t apic_id);

static inline unsigned smp_processor_id(void)
{
	return this_cpu()->id;
}

#endif
