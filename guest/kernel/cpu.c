// SPDX-License-Identifier: MIT
/* CPU numbering and masks. */
#include "kernel/cpu.h"

unsigned nr_cpu_ids = 1;
uint32_t cpu_apic_ids[NR_CPUS];
struct cpu *cpu_table[NR_CPUS];
struct cpumask cpu_possible_mask;
struct cpumask cpu_present_mask;
struct cpumask cpu_online_mask;

int cpu_from_apic_id(uint32_t apic_id)
{
	unsigned i;

	for (i = 0; i < nr_cpu_ids; i++)
		if (cpu_apic_ids[i] == apic_id)
			return (int)i;
	return -1;
}
