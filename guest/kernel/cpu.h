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

struct cpu {
	struct cpu *self; /* must stay first: this_cpu() reads it */
	unsigned id;
	uint32_t apic_id;
	int preempt_count; /* > 0: no preemption on this CPU */
	struct arch_cpu arch;
};

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
