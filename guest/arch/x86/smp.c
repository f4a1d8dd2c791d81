// SPDX-License-Identifier: MIT
/*
 * The x86 half of CPU hotplug: per-CPU area and stacks, the INIT-SIPI-SIPI kick through the
 * real-mode trampoline (the CPU finds its stack and struct cpu in ap_boot_table under its
 * APIC ID), the STARTING work on the CPU itself, and the dead CPU's halt. The state machine
 * that calls these lives in kernel/cpuhp.c.
 */
#include "arch.h"
#include "asm.h"
#include "kernel/cmdline.h"
#include "kernel/compiler.h"
#include "kernel/cpuhp.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/mm.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/timer.h"
#include "kernel/string.h"
#include "lapic.h"
#include "setup.h"
#include "traps.h"
#include "plugvm_abi.h"
#include "x86.h"

CMDLINE_PARAM(direct_start, .name = "smp.direct_start", .kind = CMDLINE_UINT, .max = 1);

struct ap_boot {
	uint64_t stack_top;
	struct cpu *cpu;
};

/* Read by entry.S (ap_start64) on the AP: 16 bytes per APIC ID. */
struct ap_boot ap_boot_table[MAX_APIC_ID];
_Static_assert(sizeof(struct ap_boot) == 16, "entry.S indexes ap_boot_table by id << 4");

extern char trampoline_start[], trampoline_end[];

int arch_smp_init(void)
{
	size_t tlen = (size_t)(trampoline_end - trampoline_start);

	if (!memmap_covers(TRAMPOLINE_BASE, ARCH_PAGE_SIZE)) {
		pr_warn("AP trampoline page %#x is not RAM: no secondary CPUs\n", TRAMPOLINE_BASE);
		return -EINVAL;
	}
	memcpy((void *)(uintptr_t)TRAMPOLINE_BASE, trampoline_start, tlen);
	return 0;
}

/*
 * percpu:prepare. The struct cpu is allocated at the first bring-up and kept, like Linux's
 * per-CPU areas: other CPUs may still hold a pointer to it (a timer's or a thread's last
 * CPU) after it goes offline. The stacks are allocated per life and freed at the teardown.
 */
int arch_cpu_prepare(unsigned cpu)
{
	struct cpu *c = cpu_table[cpu];

	if (cpu_apic_ids[cpu] >= MAX_APIC_ID) {
		pr_warn("cpu %u: APIC ID %u too large to start\n", cpu, cpu_apic_ids[cpu]);
		return -EINVAL;
	}
	if (!c) {
		c = page_zalloc(DIV_ROUND_UP(sizeof(struct cpu), PAGE_SIZE));
		if (!c)
			return -ENOMEM;
		c->self = c;
		c->id = cpu;
		c->apic_id = cpu_apic_ids[cpu];
		WRITE_ONCE(cpu_table[cpu], c);
	}
	c->preempt_count = 0;
	c->need_resched = 0;
	c->dying = 0;
	c->arch.stack = page_alloc(CPU_STACK_SIZE / PAGE_SIZE);
	if (!c->arch.ist_stack) /* kept across lives: see arch_cpu_unprepare() */
		c->arch.ist_stack = page_alloc(IST_STACK_SIZE / PAGE_SIZE);
	if (!c->arch.stack || !c->arch.ist_stack) {
		arch_cpu_unprepare(cpu);
		return -ENOMEM;
	}
	return 0;
}

int arch_cpu_unprepare(unsigned int cpu)
{
	struct cpu *c = cpu_table[cpu];

	if (!c)
		return 0;
	page_free(c->arch.stack, CPU_STACK_SIZE / PAGE_SIZE);
	c->arch.stack = NULL;
	/*
	 * The IST stack stays with the struct cpu: a dead CPU halts with its TSS still pointing
	 * there until the host ejects it, and an NMI (inject-nmi) taken meanwhile runs on it.
	 */
	return 0;
}

void *arch_cpu_idle_stack(unsigned cpu)
{
	return cpu_table[cpu]->arch.stack;
}

extern char ap_start64[], ap_direct64[];

/* plugvm's direct start (plugvm_abi.h): 1 if offered and not `smp.direct_start=0`. */
static int direct_start = -1;

static bool use_direct_start(void)
{
	if (direct_start < 0)
		direct_start = plugvm_feature(PLUGVM_FEATURE_DIRECT_START) &&
			       cmdline_uint("smp.direct_start", 1) != 0;
	return direct_start;
}

/*
 * Ask plugvm to start the CPU in long mode at ap_direct64, with its stack, its struct cpu as
 * the argument and as GS base (entry.S). The context lives on our stack: the kernel is
 * identity-mapped, and plugvm answers before the OUT completes. False: use INIT-SIPI-SIPI.
 */
static bool kick_direct(struct cpu *c)
{
	struct plugvm_start_ctx ctx __attribute__((aligned(8))) = {
		.apic_id = c->apic_id,
		.status = ~0u,
		.entry = (uint64_t)(uintptr_t)ap_direct64,
		.stack = (uint64_t)(uintptr_t)c->arch.stack + CPU_STACK_SIZE,
		.cr3 = read_cr3(),
		.gs_base = (uint64_t)(uintptr_t)c,
		.arg = (uint64_t)(uintptr_t)c,
	};

	outl(PLUGVM_PORT_DIRECT_START, (uint32_t)(uintptr_t)&ctx);
	if (READ_ONCE(ctx.status) == PLUGVM_START_OK)
		return true;
	pr_warn("cpu %u: direct start refused (%u): INIT-SIPI-SIPI\n", c->id, ctx.status);
	return false;
}

static void kick(uint32_t apic_id)
{
	lapic_send_icr(apic_id, APIC_DM_INIT | APIC_LEVEL_ASSERT);
	lapic_send_icr(apic_id, APIC_DM_STARTUP | (TRAMPOLINE_BASE >> 12));
	arch_udelay(10);
	/* Ignored by an AP that already left wait-for-SIPI. */
	lapic_send_icr(apic_id, APIC_DM_STARTUP | (TRAMPOLINE_BASE >> 12));
}

int arch_cpu_kick(unsigned cpu)
{
	struct cpu *c = cpu_table[cpu];

	if (!c || !c->arch.stack)
		return -EINVAL;
	ap_boot_table[c->apic_id].cpu = c;
	WRITE_ONCE(ap_boot_table[c->apic_id].stack_top,
		   (uint64_t)(uintptr_t)c->arch.stack + CPU_STACK_SIZE);
	if (!use_direct_start() || !kick_direct(c))
		kick(c->apic_id);
	return 0;
}

void arch_cpu_dead_cleanup(unsigned cpu)
{
	uint32_t apic_id = cpu_apic_ids[cpu];

	if (apic_id < MAX_APIC_ID) {
		WRITE_ONCE(ap_boot_table[apic_id].stack_top, 0);
		ap_boot_table[apic_id].cpu = NULL;
	}
}

/* arch:starting, on the arriving CPU: descriptor tables, TSS, LAPIC (GS base is set). */
int arch_cpu_starting(unsigned cpu)
{
	gdt_init_cpu(cpu_table[cpu], false);
	idt_load();
	lapic_init_cpu(true);
	return 0;
}

/* arch:starting teardown, on the dying CPU: mask its LAPIC's local interrupts. */
int arch_cpu_dying(unsigned cpu)
{
	(void)cpu;
	lapic_write(APIC_LVT_TIMER, APIC_LVT_MASKED);
	lapic_write(APIC_LVT_ERROR, APIC_LVT_MASKED);
	return 0;
}

/* The dying CPU's last act: say so with one store (the control CPU then frees our stack),
 * and halt with interrupts off until INIT (a new bring-up) or the VMM removes us. */
__noreturn void arch_cpu_dead(int *dead)
{
	__asm__ volatile("movl $1, (%0)\n"
			 "1: cli; hlt; jmp 1b"
			 :
			 : "r"(dead)
			 : "memory");
	__builtin_unreachable();
}

/* entry.S, on the arriving CPU with its own stack and interrupts off. */
__noreturn void ap_entry(struct cpu *c)
{
	wrmsr(MSR_GS_BASE, (uint64_t)(uintptr_t)c); /* this_cpu() from here on */
	cpuhp_ap_entry(c->id);
}

/* entry.S, on a CPU plugvm started directly: GS base is c already (plugvm_start_ctx). */
__noreturn void ap_entry_direct(struct cpu *c)
{
	cpuhp_ap_entry(c->id);
}

__attribute__((noreturn)) void arch_halt_forever(void)
{
	halt_forever();
}
