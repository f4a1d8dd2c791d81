// SPDX-License-Identifier: MIT
/*
 * plugvm's load port (load.h): allocation and registration of the latch array the
 * scheduler publishes into. The array is the kernel's for its whole life; only its
 * registration with plugvm may change (a test's, load_register_again()).
 */
#include "drivers/load.h"

#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/mm.h"
#include "kernel/printk.h"
#include "kernel/sched.h"

#define LOAD_MAX_RECORDS 1024u /* plugvm_load_register.count's limit */

static struct plugvm_load_latch *area;
static uint32_t area_count;
static struct plugvm_load_register reg __attribute__((aligned(8)));

uint32_t load_send(struct plugvm_load_register *r)
{
	/* In: 0, as the other reserved fields (plugvm refuses anything else); out: its answer.
	 * The kernel is identity-mapped: the address is the guest-physical one. */
	r->status = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	outl(PLUGVM_PORT_LOAD, (uint32_t)(uintptr_t)r);
	return __atomic_load_n(&r->status, __ATOMIC_ACQUIRE);
}

uint32_t load_register_again(void)
{
	if (!area)
		return UINT32_MAX;
	reg = (struct plugvm_load_register){ .magic = PLUGVM_LOAD_MAGIC,
					     .version = PLUGVM_LOAD_VERSION,
					     .area_gpa = (uint64_t)(uintptr_t)area,
					     .count = area_count };
	return load_send(&reg);
}

void load_start(void)
{
	uint32_t count = nr_cpu_ids, st;
	unsigned cpu;
	size_t pages;

	if (!arch_plugvm_feature(PLUGVM_FEATURE_LOAD))
		return; /* QEMU, or a plugvm without the port: nobody reads it */
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (cpu_apic_ids[cpu] >= count)
			count = cpu_apic_ids[cpu] + 1;
	if (count > LOAD_MAX_RECORDS) {
		printk("load: not registered: APIC IDs up to %u, beyond the port's %u records\n",
		       count - 1, LOAD_MAX_RECORDS);
		return;
	}
	pages = (count * sizeof(*area) + PAGE_SIZE - 1) / PAGE_SIZE;
	area = page_zalloc(pages); /* page-aligned and contiguous */
	if (!area) {
		printk("load: not registered: no memory for %u records\n", count);
		return;
	}
	area_count = count;
	sched_load_set_area(area, count);
	st = load_register_again();
	if (st != PLUGVM_LOAD_OK)
		printk("load: plugvm refused the registration (status %u)\n", st);
}
