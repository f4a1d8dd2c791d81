// SPDX-License-Identifier: MIT
/*
 * Secondary CPU start-up through INIT-SIPI-SIPI and the real-mode trampoline. The boot
 * CPU allocates each AP's struct cpu and stacks, publishes them in ap_boot_table under the
 * AP's APIC ID (entry.S looks itself up there), kicks every AP, then waits for all of them
 * to report online: the APs boot concurrently.
 */
#include "arch.h"
#include "asm.h"
#include "kernel/compiler.h"
#include "kernel/cpu.h"
#include "kernel/mm.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/timer.h"
#include "kernel/string.h"
#include "lapic.h"
#include "setup.h"
#include "traps.h"
#include "x86.h"

#define AP_START_TIMEOUT_US 10000000ull /* Linux waits 10 s for an AP to report alive */

struct ap_boot {
	uint64_t stack_top;
	struct cpu *cpu;
};

/* Read by entry.S (ap_start64) on the AP: 16 bytes per APIC ID. */
struct ap_boot ap_boot_table[MAX_APIC_ID];
_Static_assert(sizeof(struct ap_boot) == 16, "entry.S indexes ap_boot_table by id << 4");

extern char trampoline_start[], trampoline_end[];

static struct cpu *cpu_alloc(unsigned id)
{
	struct cpu *c = page_zalloc(DIV_ROUND_UP(sizeof(struct cpu), PAGE_SIZE));

	if (!c)
		return NULL;
	c->arch.stack = page_alloc(CPU_STACK_SIZE / PAGE_SIZE);
	c->arch.ist_stack = page_alloc(IST_STACK_SIZE / PAGE_SIZE);
	if (!c->arch.stack || !c->arch.ist_stack) {
		page_free(c->arch.stack, CPU_STACK_SIZE / PAGE_SIZE);
		page_free(c->arch.ist_stack, IST_STACK_SIZE / PAGE_SIZE);
		page_free(c, DIV_ROUND_UP(sizeof(struct cpu), PAGE_SIZE));
		return NULL;
	}
	c->self = c;
	c->id = id;
	c->apic_id = cpu_apic_ids[id];
	cpu_table[id] = c;
	timers_prepare_cpu(id);
	if (sched_prepare_cpu(id, c->arch.stack)) {
		cpu_table[id] = NULL;
		page_free(c->arch.stack, CPU_STACK_SIZE / PAGE_SIZE);
		page_free(c->arch.ist_stack, IST_STACK_SIZE / PAGE_SIZE);
		page_free(c, DIV_ROUND_UP(sizeof(struct cpu), PAGE_SIZE));
		return NULL;
	}
	return c;
}

static void kick(uint32_t apic_id)
{
	lapic_send_icr(apic_id, APIC_DM_INIT | APIC_LEVEL_ASSERT);
	lapic_send_icr(apic_id, APIC_DM_STARTUP | (TRAMPOLINE_BASE >> 12));
	arch_udelay(10);
	/* Ignored by an AP that already left wait-for-SIPI. */
	lapic_send_icr(apic_id, APIC_DM_STARTUP | (TRAMPOLINE_BASE >> 12));
}

void arch_start_secondary_cpus(void)
{
	size_t tlen = (size_t)(trampoline_end - trampoline_start);
	uint64_t deadline;
	unsigned cpu, kicked = 0;

	if (cpumask_weight(&cpu_present_mask) < 2)
		return;
	if (!memmap_covers(TRAMPOLINE_BASE, ARCH_PAGE_SIZE))
		panic("AP trampoline page %#x is not RAM", TRAMPOLINE_BASE);
	memcpy((void *)(uintptr_t)TRAMPOLINE_BASE, trampoline_start, tlen);

	for_each_cpu(cpu, &cpu_present_mask) {
		struct cpu *c;

		if (cpu == 0)
			continue;
		if (cpu_apic_ids[cpu] >= MAX_APIC_ID) {
			pr_warn("cpu %u: APIC ID %u too large to start\n", cpu, cpu_apic_ids[cpu]);
			continue;
		}
		c = cpu_alloc(cpu);
		if (!c) {
			pr_warn("cpu %u: out of memory\n", cpu);
			continue;
		}
		ap_boot_table[c->apic_id].cpu = c;
		WRITE_ONCE(ap_boot_table[c->apic_id].stack_top,
			   (uint64_t)(uintptr_t)c->arch.stack + CPU_STACK_SIZE);
		kick(c->apic_id);
		kicked++;
	}

	deadline = arch_now_ns() + AP_START_TIMEOUT_US * 1000;
	while (cpumask_weight(&cpu_online_mask) < kicked + 1 && arch_now_ns() < deadline)
		arch_cpu_relax();
	for_each_cpu(cpu, &cpu_present_mask)
		if (cpu && cpu_table[cpu] && !cpumask_test(&cpu_online_mask, cpu))
			pr_warn("cpu %u: did not come online within %llu s\n", cpu,
				AP_START_TIMEOUT_US / 1000000);
}

void ap_entry(struct cpu *c)
{
	gdt_init_cpu(c);
	idt_load();
	lapic_init_cpu();
	sched_start_cpu();
	tick_start_cpu();
	cpumask_set(&cpu_online_mask, c->id);
	sched_activate_cpu(c->id);
	if (timers_online_cpu(c->id))
		panic("cpu %u: cannot start its timer thread", c->id);
	printk("cpu %u: online (apic %u)\n", c->id, c->apic_id);
	sched_idle();
}

__attribute__((noreturn)) void arch_halt_forever(void)
{
	halt_forever();
}
