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
	uint64_t nr_irqs; /* interrupts taken in this life (only this CPU writes it) */
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

/*
 * Add `cpu` to cpu_online_mask (or take it out), first accounting the time since the last
 * change at the old count (cpu_online_integral_ns()). Any context; a spinlock inside.
 */
void cpu_set_online(unsigned cpu, bool online);
/*
 * The integral over time of the number of online CPUs, in CPU-ns, from the first
 * cpu_set_online() to now, exact at every change; *nr (if not NULL) gets the count now.
 * Any context.
 */
uint64_t cpu_online_integral_ns(unsigned *nr);

/* Logical CPU number of `apic_id`, or -1. */
int cpu_from_apic_id(uint32_t apic_id);

/*
 * Per-CPU access. A struct cpu pointer or CPU number is only meaningful while the caller
 * cannot move to another CPU: preemption or interrupts disabled, migration disabled (RT),
 * or a thread that only ever runs on this CPU (pinned, idle). Read in preemptible code, it
 * may name the CPU the thread has just left; worse, `this_cpu()->field` is two loads, and a
 * migration between them reads the field of another CPU. The raw_ forms skip the check for
 * callers that only want a hint (statistics, placement); current_thread() is one load and
 * always right. With CONFIG_LOCKDEP a checked read from migratable code reports
 * "BUG: using this_cpu in preemptible code" with a backtrace, as Linux's DEBUG_PREEMPT.
 */
#ifdef CONFIG_LOCKDEP
/* Out of line: the preemptible case, where the running thread decides (kernel/sched_debug.c). */
void debug_this_cpu_preemptible(const char *what);
#endif

static inline void check_this_cpu(const char *what)
{
#ifdef CONFIG_LOCKDEP
	if (likely(preempt_count() != 0) || !arch_irqs_enabled())
		return;
	debug_this_cpu_preemptible(what);
#else
	(void)what;
#endif
}

static inline struct cpu *raw_this_cpu(void)
{
	return arch_this_cpu();
}

static inline struct cpu *this_cpu(void)
{
	check_this_cpu("this_cpu");
	return arch_this_cpu();
}

static inline unsigned raw_smp_processor_id(void)
{
	return (unsigned)arch_percpu_read_int(__builtin_offsetof(struct cpu, id));
}

static inline unsigned smp_processor_id(void)
{
	check_this_cpu("smp_processor_id");
	return raw_smp_processor_id();
}

#endif
