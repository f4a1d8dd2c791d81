// SPDX-License-Identifier: MIT
/* The guest memory map (E820 numbering) and the PVH start_info that carries it. */
#include <errno.h>
#include <string.h>

#include "boot.h"
#include "layout.h"

static int add(struct plugvm_pvh_memmap_entry *out, int n, int max, uint64_t addr, uint64_t size,
	       uint32_t type)
{
	if (n >= max)
		return -ENOSPC;
	out[n].addr = addr;
	out[n].size = size;
	out[n].type = type;
	out[n].reserved = 0;
	return n + 1;
}

int e820_build(const struct guest_mem *m, struct plugvm_pvh_memmap_entry *out, int max)
{
	uint64_t low_end = mem_low_end(m);
	int n = 0;

#define ADD(a, s, t)                                 \
	do {                                         \
		n = add(out, n, max, (a), (s), (t)); \
		if (n < 0)                           \
			return n;                    \
	} while (0)
	ADD(0, LAYOUT_EBDA, PLUGVM_PVH_MEMMAP_RAM);
	ADD(LAYOUT_EBDA, 0xa0000 - LAYOUT_EBDA, PLUGVM_PVH_MEMMAP_RESERVED);
	ADD(LAYOUT_ACPI_BASE, LAYOUT_ACPI_SIZE, PLUGVM_PVH_MEMMAP_RESERVED);
	if (low_end > LAYOUT_KERNEL_MIN)
		ADD(LAYOUT_KERNEL_MIN, low_end - LAYOUT_KERNEL_MIN, PLUGVM_PVH_MEMMAP_RAM);
	ADD(LAYOUT_KVM_IDENTITY_MAP, LAYOUT_KVM_RESERVED_SIZE, PLUGVM_PVH_MEMMAP_RESERVED);
	if (m->nr_regions > 1)
		ADD(m->regions[1].gpa, m->regions[1].size, PLUGVM_PVH_MEMMAP_RAM);
#undef ADD
	return n;
}

gpa_t pvh_write_start_info(struct guest_mem *m, const char *cmdline, gpa_t rsdp)
{
	struct plugvm_pvh_start_info *si;
	struct plugvm_pvh_memmap_entry *map;
	size_t len = strlen(cmdline);
	char *cl;
	int n;

	si = mem_gpa_ptr(m, LAYOUT_START_INFO, sizeof(*si));
	map = mem_gpa_ptr(m, LAYOUT_MEMMAP, LAYOUT_MEMMAP_MAX * sizeof(*map));
	cl = mem_gpa_ptr(m, LAYOUT_CMDLINE, LAYOUT_CMDLINE_MAX);
	if (!si || !map || !cl || len >= LAYOUT_CMDLINE_MAX)
		return 0;
	n = e820_build(m, map, LAYOUT_MEMMAP_MAX);
	if (n < 0)
		return 0;
	memcpy(cl, cmdline, len + 1);
	memset(si, 0, sizeof(*si));
	si->magic = PLUGVM_PVH_START_MAGIC;
	si->version = PLUGVM_PVH_START_VERSION;
	si->cmdline_paddr = LAYOUT_CMDLINE;
	si->rsdp_paddr = rsdp;
	si->memmap_paddr = LAYOUT_MEMMAP;
	si->memmap_entries = (uint32_t)n;
	return LAYOUT_START_INFO;
}
