// SPDX-License-Identifier: MIT
/*
 * arch_boot(): the boot CPU's first C code. Sets up what printk and traps need (per-CPU
 * GS, GDT, IDT, console), copies the PVH start-of-day data (it may live in option-ROM
 * memory that is not ours), finds memory and ACPI tables, numbers the CPUs, and hands
 * over to kernel_main().
 */
#include "acpi.h"
#include "arch.h"
#include "asm.h"
#include "ioapic.h"
#include "kernel/cmdline.h"
#include "kernel/cpu.h"
#include "kernel/init.h"
#include "kernel/mm.h"
#include "kernel/printk.h"
#include "kernel/string.h"
#include "lapic.h"
#include "pvh.h"
#include "setup.h"
#include "traps.h"
#include "x86.h"

CMDLINE_PARAM(verbose, .name = "verbose", .kind = CMDLINE_FLAG);

#define MEMMAP_MAX 128

extern char __kernel_end[], boot_stack[];

static struct cpu boot_cpu;
static uint8_t boot_ist_stack[IST_STACK_SIZE] __aligned(16);
static struct plugvm_pvh_memmap_entry memmap[MEMMAP_MAX];
static unsigned memmap_entries;

bool memmap_covers(uint64_t pa, uint64_t len)
{
	unsigned i;

	for (i = 0; i < memmap_entries; i++)
		if (pa >= memmap[i].addr && pa - memmap[i].addr <= memmap[i].size &&
		    len <= memmap[i].size - (pa - memmap[i].addr))
			return true;
	return false;
}

bool arch_plugvm_feature(uint32_t bit)
{
	return plugvm_feature(bit);
}

/* The ACPI parser's window on memory (acpi.h): tables live in RAM or the BIOS area. */
void *acpi_os_map(uint64_t pa, uint64_t len)
{
	/* Everything below 4 GiB is identity-mapped; the BIOS area is fair game as well. */
	if (pa + len < pa || pa + len > (1ull << 32))
		return NULL;
	if (!memmap_covers(pa, len) && !(pa >= 0x400 && pa + len <= 0x100000))
		return NULL;
	return (void *)(uintptr_t)pa;
}

/* Say how much RAM the memory map offers that this kernel leaves alone (all but `used`). */
static void unused_ram_warning(unsigned used)
{
	uint64_t above = 0, other = 0;
	unsigned i;

	for (i = 0; i < memmap_entries; i++) {
		uint64_t start = memmap[i].addr, end = start + memmap[i].size;

		if (memmap[i].type != PLUGVM_PVH_MEMMAP_RAM || memmap[i].size < (1u << 20))
			continue;
		if (end > (1ull << 32))
			above += end - (start > (1ull << 32) ? start : (1ull << 32));
		if (i != used && start < (1ull << 32))
			other += (end < (1ull << 32) ? end : (1ull << 32)) - start;
	}
	if (above)
		pr_warn("mm: %lu MiB of RAM above 4 GiB not used (this kernel maps the first "
			"4 GiB only)\n",
			(unsigned long)(above >> 20));
	if (other)
		pr_warn("mm: %lu MiB of RAM below 4 GiB not used (only the region holding the "
			"kernel is)\n",
			(unsigned long)(other >> 20));
}

/* The RAM entry holding the kernel, clipped to the identity map. */
static void memory_init(void)
{
	uint64_t kend = (uint64_t)(uintptr_t)__kernel_end;
	unsigned i;

	for (i = 0; i < memmap_entries; i++) {
		uint64_t start = memmap[i].addr, end = start + memmap[i].size;

		if (memmap[i].type != PLUGVM_PVH_MEMMAP_RAM || kend < start || kend >= end)
			continue;
		if (end > (1ull << 32))
			end = 1ull << 32;
		mm_init((uintptr_t)kend, (uintptr_t)end);
		unused_ram_warning(i);
		return;
	}
	panic("no RAM entry in the memory map holds the kernel end %#lx", (unsigned long)kend);
}

static void copy_start_info(const struct plugvm_pvh_start_info *si)
{
	const char *cl = si->cmdline_paddr ? (const char *)(uintptr_t)si->cmdline_paddr : "";

	cmdline_init(cl);
	if (si->version >= 1 && si->memmap_paddr && si->memmap_entries) {
		memmap_entries = si->memmap_entries < MEMMAP_MAX ? si->memmap_entries : MEMMAP_MAX;
		memcpy(memmap, (const void *)(uintptr_t)si->memmap_paddr,
		       memmap_entries * sizeof(memmap[0]));
	}
}

/* Number the CPUs: 0 is the boot CPU, the rest in MADT order. */
static void cpus_init(void)
{
	const struct acpi_info *ai = acpi_get_info();
	uint32_t bsp = arch_apic_id();
	unsigned i, n = 1;

	cpu_apic_ids[0] = bsp;
	cpumask_set(&cpu_possible_mask, 0);
	cpumask_set(&cpu_present_mask, 0);
	for (i = 0; i < ai->nr_cpus && n < NR_CPUS; i++) {
		if (ai->cpus[i].apic_id == bsp)
			continue;
		cpu_apic_ids[n] = ai->cpus[i].apic_id;
		cpumask_set(&cpu_possible_mask, n);
		if (ai->cpus[i].enabled)
			cpumask_set(&cpu_present_mask, n);
		n++;
	}
	nr_cpu_ids = n;
	boot_cpu.apic_id = bsp;
}

void arch_boot(uint32_t start_info_pa);

void arch_boot(uint32_t start_info_pa)
{
	const struct plugvm_pvh_start_info *si = (const void *)(uintptr_t)start_info_pa;

	boot_cpu.id = 0;
	boot_cpu.arch.stack = boot_stack;
	boot_cpu.arch.ist_stack = boot_ist_stack;
	gdt_init_cpu(&boot_cpu, true);
	cpu_table[0] = &boot_cpu;
	idt_init();
	idt_load();
	console_init(); /* the 16550 (drivers/uart.c): printk and panics from here on */
	if (si->magic != PLUGVM_PVH_START_MAGIC)
		panic("bad hvm_start_info magic %#x at %#x", si->magic, start_info_pa);
	copy_start_info(si);
	printk_verbose = cmdline_flag("verbose");
	memory_init();
	acpi_init(si->rsdp_paddr);
	lapic_init_cpu(false);
	cpus_init();
	ioapic_init(acpi_get_info()->ioapic_addr);
	tsc_init();
	cpumask_set(&cpu_online_mask, 0);
	kernel_main();
}
