/* SPDX-License-Identifier: MIT */
/* PVH start-of-day data: the E820-style memory map and hvm_start_info in guest memory. */
#ifndef PLUGVM_VMM_X86_BOOT_H
#define PLUGVM_VMM_X86_BOOT_H

#include "../mem.h"
#include "pvh.h"

/*
 * Fill `out` (room for `max` entries) with the guest's memory map, sorted by address:
 * RAM, the legacy holes, the ACPI area and KVM's reserved pages. Returns the number of
 * entries or -ENOSPC.
 */
int e820_build(const struct guest_mem *m, struct plugvm_pvh_memmap_entry *out, int max);

/*
 * Write hvm_start_info (version 1), the memory map and the command line at their
 * layout.h addresses. rsdp may be 0. Returns the start_info address (for EBX) or 0 if the
 * command line does not fit (callers validate its length first).
 */
gpa_t pvh_write_start_info(struct guest_mem *m, const char *cmdline, gpa_t rsdp);

#endif
