// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/x86/e820.c over real guest memory (vmm/mem.c, MAP_NORESERVE so
 * multi-GiB guests are cheap): the memory map's order and totals, RAM above 3 GiB moved
 * to 4 GiB, -ENOSPC, and hvm_start_info as pvh_write_start_info leaves it.
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <stdlib.h>

#include "pvh.h"
#include "vmm/mem.h"
#include "vmm/x86/boot.h"
#include "vmm/x86/layout.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

/* Bytes of configured RAM the map reports as a hole: [EBDA, 1 MiB) is mapped but reserved. */
#define LEGACY_HOLE (LAYOUT_KERNEL_MIN - LAYOUT_EBDA)

static int build(uint64_t size, struct guest_mem *m, struct plugvm_pvh_memmap_entry *map, int max)
{
	int n;

	assert_int_equal(mem_init(m, size), 0);
	n = e820_build(m, map, max);
	return n;
}

/* Sorted, non-overlapping, non-empty entries of known types; returns the RAM total. */
static uint64_t check_map(const struct plugvm_pvh_memmap_entry *map, int n)
{
	uint64_t ram = 0, prev_end = 0;
	int i;

	assert_true(n > 0);
	for (i = 0; i < n; i++) {
		if (map[i].size == 0)
			fail_msg("entry %d is empty", i);
		if (map[i].addr < prev_end)
			fail_msg(
			    "entry %d at %#llx overlaps or precedes the one before (end %#llx)", i,
			    (unsigned long long)map[i].addr, (unsigned long long)prev_end);
		if (map[i].addr + map[i].size < map[i].addr)
			fail_msg("entry %d wraps", i);
		prev_end = map[i].addr + map[i].size;
		assert_in_range(map[i].type, PLUGVM_PVH_MEMMAP_RAM, PLUGVM_PVH_MEMMAP_UNUSABLE);
		assert_int_equal(map[i].reserved, 0);
		if (map[i].type == PLUGVM_PVH_MEMMAP_RAM)
			ram += map[i].size;
	}
	return ram;
}

/* True if [addr, addr + size) is inside one entry of `type`. */
static bool covered(const struct plugvm_pvh_memmap_entry *map, int n, uint64_t addr, uint64_t size,
		    uint32_t type)
{
	int i;

	for (i = 0; i < n; i++)
		if (map[i].type == type && addr >= map[i].addr &&
		    addr + size <= map[i].addr + map[i].size)
			return true;
	return false;
}

static void test_small_guest(void **state)
{
	static const struct plugvm_pvh_memmap_entry want[] = {
		{ 0, 0x9fc00, PLUGVM_PVH_MEMMAP_RAM, 0 },
		{ 0x9fc00, 0x400, PLUGVM_PVH_MEMMAP_RESERVED, 0 },
		{ 0xe0000, 0x20000, PLUGVM_PVH_MEMMAP_RESERVED, 0 },
		{ 0x100000, 64 * MiB - 0x100000, PLUGVM_PVH_MEMMAP_RAM, 0 },
		{ 0xfeffc000, 0x4000, PLUGVM_PVH_MEMMAP_RESERVED, 0 },
	};
	struct plugvm_pvh_memmap_entry map[LAYOUT_MEMMAP_MAX];
	struct guest_mem m;
	int n, i;

	(void)state;
	n = build(64 * MiB, &m, map, LAYOUT_MEMMAP_MAX);
	assert_int_equal(n, 5);
	for (i = 0; i < n; i++) {
		assert_int_equal(map[i].addr, want[i].addr);
		assert_int_equal(map[i].size, want[i].size);
		assert_int_equal(map[i].type, want[i].type);
	}
	assert_int_equal(check_map(map, n) + LEGACY_HOLE, 64 * MiB);
	/* The boot data and the ACPI tables are where the map says. */
	assert_true(covered(map, n, LAYOUT_START_INFO, 0x1000, PLUGVM_PVH_MEMMAP_RAM));
	assert_true(covered(map, n, LAYOUT_CMDLINE, LAYOUT_CMDLINE_MAX, PLUGVM_PVH_MEMMAP_RAM));
	assert_true(
	    covered(map, n, LAYOUT_ACPI_BASE, LAYOUT_ACPI_SIZE, PLUGVM_PVH_MEMMAP_RESERVED));
	assert_true(covered(map, n, LAYOUT_KVM_TSS, 0x3000, PLUGVM_PVH_MEMMAP_RESERVED));
	mem_destroy(&m);
}

static void test_sizes(void **state)
{
	static const uint64_t sizes[] = {
		4 * MiB,	5 * MiB + 4096, 64 * MiB, 1 * GiB,  3 * GiB - 4096, 3 * GiB,
		3 * GiB + 4096, 4 * GiB,	5 * GiB,  64 * GiB, 256 * GiB,
	};
	struct plugvm_pvh_memmap_entry map[LAYOUT_MEMMAP_MAX];
	size_t s;

	(void)state;
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint64_t size = sizes[s], low = size < 3 * GiB ? size : 3 * GiB;
		struct guest_mem m;
		int n = build(size, &m, map, LAYOUT_MEMMAP_MAX);
		uint64_t ram = check_map(map, n);

		if (ram + LEGACY_HOLE != size)
			fail_msg("%llu MiB guest: map has %llu bytes of RAM",
				 (unsigned long long)(size >> 20), (unsigned long long)ram);
		/* Every RAM byte the map reports is guest memory. */
		for (int i = 0; i < n; i++)
			if (map[i].type == PLUGVM_PVH_MEMMAP_RAM &&
			    !mem_gpa_ptr(&m, map[i].addr, map[i].size))
				fail_msg("RAM entry %d [%#llx+%#llx) is not mapped", i,
					 (unsigned long long)map[i].addr,
					 (unsigned long long)map[i].size);
		assert_true(covered(map, n, LAYOUT_KERNEL_MIN, low - LAYOUT_KERNEL_MIN,
				    PLUGVM_PVH_MEMMAP_RAM));
		assert_false(covered(map, n, low, 1, PLUGVM_PVH_MEMMAP_RAM));
		if (size > 3 * GiB) {
			/* Low RAM ends at 3 GiB, the rest starts at 4 GiB. */
			assert_int_equal(map[n - 1].addr, 4 * GiB);
			assert_int_equal(map[n - 1].size, size - 3 * GiB);
			assert_int_equal(map[n - 1].type, PLUGVM_PVH_MEMMAP_RAM);
			assert_int_equal(mem_low_end(&m), 3 * GiB);
			assert_false(covered(map, n, 3 * GiB, 1, PLUGVM_PVH_MEMMAP_RAM));
			assert_false(covered(map, n, 4 * GiB - 1, 1, PLUGVM_PVH_MEMMAP_RAM));
			assert_int_equal(n, 6);
		} else {
			assert_int_equal(n, 5);
			assert_true(map[n - 1].addr + map[n - 1].size <= 4 * GiB);
		}
		mem_destroy(&m);
	}
}

static void test_enospc(void **state)
{
	struct plugvm_pvh_memmap_entry map[LAYOUT_MEMMAP_MAX];
	struct guest_mem m;
	int max, n;

	(void)state;
	n = build(5 * GiB, &m, map, LAYOUT_MEMMAP_MAX);
	assert_int_equal(n, 6);
	for (max = 0; max < n; max++) {
		memset(map, 0x5a, sizeof(map));
		assert_int_equal(e820_build(&m, map, max), -ENOSPC);
		/* Nothing past `max` was written. */
		assert_int_equal(((uint8_t *)map)[max * sizeof(map[0])], 0x5a);
	}
	assert_int_equal(e820_build(&m, map, n), n);
	mem_destroy(&m);
}

static const struct plugvm_pvh_start_info *start_info(struct guest_mem *m)
{
	const struct plugvm_pvh_start_info *si = mem_gpa_ptr(m, LAYOUT_START_INFO, sizeof(*si));

	assert_non_null(si);
	return si;
}

static void test_start_info(void **state)
{
	static const char cmd[] = "hz=1000 selftest=cpuhp halt";
	struct plugvm_pvh_memmap_entry want[LAYOUT_MEMMAP_MAX];
	const struct plugvm_pvh_start_info *si;
	const struct plugvm_pvh_memmap_entry *map;
	struct guest_mem m;
	int n;

	(void)state;
	assert_int_equal(mem_init(&m, 5 * GiB), 0);
	memset(mem_gpa_ptr(&m, 0, 0x3000), 0xee, 0x3000);
	assert_int_equal(pvh_write_start_info(&m, cmd, 0xe0000), LAYOUT_START_INFO);
	si = start_info(&m);
	assert_int_equal(si->magic, 0x336ec578u);
	assert_int_equal(si->magic, PLUGVM_PVH_START_MAGIC);
	assert_int_equal(si->version, 1);
	assert_int_equal(si->flags, 0);
	assert_int_equal(si->nr_modules, 0);
	assert_int_equal(si->modlist_paddr, 0);
	assert_int_equal(si->rsdp_paddr, 0xe0000);
	assert_int_equal(si->reserved, 0);
	assert_int_equal(si->cmdline_paddr, LAYOUT_CMDLINE);
	assert_string_equal((const char *)mem_gpa_ptr(&m, si->cmdline_paddr, sizeof(cmd)), cmd);

	n = e820_build(&m, want, LAYOUT_MEMMAP_MAX);
	assert_int_equal(si->memmap_entries, n);
	assert_int_equal(si->memmap_paddr, LAYOUT_MEMMAP);
	map = mem_gpa_ptr(&m, si->memmap_paddr, (uint64_t)n * sizeof(*map));
	assert_non_null(map);
	assert_memory_equal(map, want, (size_t)n * sizeof(*map));
	/* start_info, the map and the command line do not overlap. */
	assert_true(LAYOUT_START_INFO + sizeof(*si) <= si->memmap_paddr);
	assert_true(si->memmap_paddr + LAYOUT_MEMMAP_MAX * sizeof(*map) <= si->cmdline_paddr);
	mem_destroy(&m);

	/* No RSDP, an empty command line. */
	assert_int_equal(mem_init(&m, 64 * MiB), 0);
	memset(mem_gpa_ptr(&m, LAYOUT_CMDLINE, 16), 'x', 16);
	assert_int_equal(pvh_write_start_info(&m, "", 0), LAYOUT_START_INFO);
	si = start_info(&m);
	assert_int_equal(si->rsdp_paddr, 0);
	assert_int_equal(si->memmap_entries, 5);
	assert_string_equal((const char *)mem_gpa_ptr(&m, LAYOUT_CMDLINE, 1), "");
	mem_destroy(&m);
}

static void test_cmdline_length(void **state)
{
	char *cmd = malloc(LAYOUT_CMDLINE_MAX + 1);
	uint8_t before[0x3000];
	struct guest_mem m;

	(void)state;
	assert_non_null(cmd);
	assert_int_equal(mem_init(&m, 64 * MiB), 0);

	/* The longest line that fits: 4095 bytes and its NUL. */
	memset(cmd, 'a', LAYOUT_CMDLINE_MAX - 1);
	cmd[LAYOUT_CMDLINE_MAX - 1] = '\0';
	assert_int_equal(pvh_write_start_info(&m, cmd, 0), LAYOUT_START_INFO);
	assert_string_equal((const char *)mem_gpa_ptr(&m, LAYOUT_CMDLINE, LAYOUT_CMDLINE_MAX), cmd);

	/* One more byte does not fit: refused, and nothing is written. */
	memset(mem_gpa_ptr(&m, 0, sizeof(before)), 0x77, sizeof(before));
	memcpy(before, mem_gpa_ptr(&m, 0, sizeof(before)), sizeof(before));
	cmd[LAYOUT_CMDLINE_MAX - 1] = 'a';
	cmd[LAYOUT_CMDLINE_MAX] = '\0';
	assert_int_equal(pvh_write_start_info(&m, cmd, 0xe0000), 0);
	assert_memory_equal(mem_gpa_ptr(&m, 0, sizeof(before)), before, sizeof(before));
	mem_destroy(&m);
	free(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_guest),    cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_enospc),	       cmocka_unit_test(test_start_info),
		cmocka_unit_test(test_cmdline_length),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
