/* SPDX-License-Identifier: MIT */
/*
 * Guest RAM: one anonymous host mapping per RAM region, and the single checked accessor
 * that turns a guest-physical range into a host pointer. Guest addresses stay plain
 * integers (gpa_t) so nothing dereferences one by accident.
 */
#ifndef PLUGVM_VMM_MEM_H
#define PLUGVM_VMM_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t gpa_t;

struct mem_region {
	gpa_t gpa;
	uint64_t size;
	uint8_t *hva;
};

#define MEM_MAX_REGIONS 2

struct guest_mem {
	uint64_t size; /* total RAM bytes */
	int nr_regions;
	struct mem_region regions[MEM_MAX_REGIONS];
	/*
	 * RAM is as mem_init() or mem_clear() left it (zero, pages not backed) but for the
	 * VMM's own tables outside the kernel's segments (layout.h): loader_load_elf() leaves
	 * a fresh bss unbacked (writing it would make 1.3 MB of guest.elf's resident before
	 * the guest touched any of it), and clears this once it has loaded
	 * (test_loader.c: test_bss_of_fresh_ram_stays_unbacked).
	 */
	bool fresh;
};

/*
 * Map `size` bytes of zeroed guest RAM: up to LAYOUT_LOW_RAM_MAX at gpa 0, the rest at
 * 4 GiB. Returns 0 or -errno (logged).
 */
int mem_init(struct guest_mem *m, uint64_t size);
/*
 * Guest RAM in transparent huge pages or not (mem_init(): not). A host whose THP is
 * `always` (Debian's default) would otherwise back every first touch with 2 MiB: an idle
 * 64 MiB plugvm guest then held 5.5-7 MB instead of 3.6 (test_memory.py). `on` is
 * QEMU's choice (MADV_HUGEPAGE), for guests that use much of their RAM.
 */
void mem_set_thp(struct guest_mem *m, bool on);
void mem_destroy(struct guest_mem *m);
/*
 * Every byte of guest RAM back to zero, as at mem_init() (system_reset): the pages are
 * dropped and come back zero-filled when touched. No vCPU may run. Returns 0 or -errno.
 */
int mem_clear(struct guest_mem *m);

/*
 * Host pointer for [gpa, gpa + len) if that whole range is RAM of one region, else NULL.
 * Overflow-safe; len 0 is allowed. Never logs: callers know whether the guest or the VMM
 * asked and report accordingly.
 */
void *mem_gpa_ptr(const struct guest_mem *m, gpa_t gpa, uint64_t len);

/* End of RAM below 4 GiB (exclusive). */
uint64_t mem_low_end(const struct guest_mem *m);

#endif
