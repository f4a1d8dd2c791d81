// SPDX-License-Identifier: MIT
/*
 * The VMM's ACPI builder (vmm/x86/acpi.c) cross-checked with the guest's parser
 * (guest/arch/x86/acpi.c): tables built into a buffer that acpi_os_map() presents as the
 * guest's first MiB, parsed back for several CPU counts on each machine (pc, q35), then
 * corrupted one way at a time to check that the parser refuses (with a warning) rather than
 * trusts or crashes.
 */
#include "tests/unit/unit.h"

#include <stdlib.h>

#include "acpi_tables.h"
#include "arch.h"
#include "guest/arch/x86/acpi.h"
#include "kernel/errno.h"
#include "kernel/printk.h"
#include "tests/unit/guest_console.h"
#include "plugvm_abi.h"
#include "vmm/x86/acpi.h"
#include "vmm/x86/acpi_layout.h"
#include "vmm/x86/layout.h"

#define RAM_SIZE  0x100000ul /* the BIOS-visible first MiB */
#define ACPI_BASE LAYOUT_ACPI_BASE
#define ACPI_SIZE LAYOUT_ACPI_SIZE

static uint8_t *ram; /* malloc'd exactly RAM_SIZE: ASan catches any over-read */
static uint64_t map_end = RAM_SIZE; /* acpi_os_map() refuses anything past this */
static enum config_machine machine = MACHINE_PC; /* what build() builds for */
static struct unit_console con = UNIT_CONSOLE_INIT;

/* ---- what the guest kernel links against ---------------------------------------------- */

void *acpi_os_map(uint64_t pa, uint64_t len)
{
	if (pa > map_end || len > map_end - pa)
		return NULL;
	return ram + pa;
}

/* ---- helpers -------------------------------------------------------------------------- */

static void *at(uint64_t pa)
{
	assert_true(pa < RAM_SIZE);
	return ram + pa;
}

static struct plugvm_acpi_rsdp *rsdp(void)
{
	return at(ACPI_BASE);
}

static struct plugvm_acpi_header *xsdt(void)
{
	return at(rsdp()->xsdt_address);
}

static struct plugvm_acpi_header *rsdt(void)
{
	return at(rsdp()->rsdt_address);
}

/* A table listed in the XSDT, by signature. */
static struct plugvm_acpi_header *table(const char *sig)
{
	struct plugvm_acpi_header *x = xsdt();
	unsigned i, n = (x->length - sizeof(*x)) / 8;

	for (i = 0; i < n; i++) {
		uint64_t pa;
		struct plugvm_acpi_header *h;

		memcpy(&pa, (uint8_t *)(x + 1) + 8 * i, 8);
		h = at(pa);
		if (!memcmp(h->signature, sig, 4))
			return h;
	}
	fail_msg("no %s in the XSDT", sig);
	return NULL;
}

static struct plugvm_acpi_fadt *fadt(void)
{
	return (struct plugvm_acpi_fadt *)table(PLUGVM_ACPI_SIG_FADT);
}

static struct plugvm_acpi_header *madt(void)
{
	return table(PLUGVM_ACPI_SIG_MADT);
}

static struct plugvm_acpi_header *dsdt(void)
{
	return at(fadt()->x_dsdt);
}

/* The k-th MADT entry. */
static struct plugvm_madt_entry *madt_entry(unsigned k)
{
	struct plugvm_acpi_header *h = madt();
	uint8_t *p = (uint8_t *)h + sizeof(struct plugvm_acpi_madt);

	while (k--)
		p += ((struct plugvm_madt_entry *)p)->length;
	assert_true(p < (uint8_t *)h + h->length);
	return (struct plugvm_madt_entry *)p;
}

static void fix_checksum(struct plugvm_acpi_header *h)
{
	h->checksum = 0;
	h->checksum = (uint8_t)-acpi_checksum(h, h->length);
}

static void fix_rsdp(struct plugvm_acpi_rsdp *r)
{
	r->checksum = 0;
	r->checksum = (uint8_t)-acpi_checksum(r, 20);
	r->extended_checksum = 0;
	r->extended_checksum = (uint8_t)-acpi_checksum(r, sizeof(*r));
}

/* Wipe the first MiB and build the tables for (nr, max) on `machine` at the ACPI base. */
static void build(unsigned nr, unsigned max)
{
	struct acpi_config cfg = { .nr_cpus = nr,
				   .max_cpus = max,
				   .layout = acpi_layout_of(machine) };

	memset(ram, 0, RAM_SIZE);
	map_end = RAM_SIZE;
	assert_int_equal(acpi_build(ram + ACPI_BASE, ACPI_SIZE, ACPI_BASE, &cfg), ACPI_BASE);
	unit_console_clear(&con);
}

/* Parse; returns acpi_init's result. */
static int parse(uint64_t rsdp_pa)
{
	unit_console_clear(&con);
	return acpi_init(rsdp_pa);
}

static void check_checksums(void)
{
	const struct plugvm_acpi_header *t[] = { rsdt(), xsdt(), &fadt()->header, madt(), dsdt() };
	size_t i;

	assert_memory_equal(rsdp()->signature, "RSD PTR ", 8);
	assert_int_equal(rsdp()->revision, 2);
	assert_int_equal(rsdp()->length, 36);
	assert_int_equal(acpi_checksum(rsdp(), 20), 0);
	assert_int_equal(acpi_checksum(rsdp(), 36), 0);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_true(t[i]->length >= sizeof(*t[i]));
		if (acpi_checksum(t[i], t[i]->length) || acpi_checksum(t[i], t[i]->length))
			fail_msg("table %.4s does not sum to 0", t[i]->signature);
		/* Every table lies inside the ACPI area. */
		assert_true((uint8_t *)t[i] >= ram + ACPI_BASE);
		assert_true((uint8_t *)t[i] + t[i]->length <= ram + ACPI_BASE + ACPI_SIZE);
		assert_memory_equal(t[i]->oem_id, "PLUGVM", 6);
	}
	/* RSDT and XSDT list the same two tables. */
	assert_int_equal(rsdt()->length, 36 + 2 * 4);
	assert_int_equal(xsdt()->length, 36 + 2 * 8);
	assert_int_equal(fadt()->dsdt, fadt()->x_dsdt);
	assert_int_equal(fadt()->header.length, sizeof(struct plugvm_acpi_fadt));
}

static void check_parse(unsigned nr, unsigned max)
{
	const struct acpi_info *info = acpi_get_info();
	unsigned i, n_lapic = 0, n_x2apic = 0, k;

	if (parse(ACPI_BASE) != 0)
		fail_msg("acpi_init failed: %s", con.buf);
	if (info->nr_warnings)
		fail_msg("%u warnings: %s", info->nr_warnings, con.buf);
	assert_int_equal(info->rsdp, ACPI_BASE);
	assert_true(info->have_fadt);
	assert_int_equal(info->sci_irq, 9);
	assert_int_equal(info->pm1a_evt_blk, 0x600);
	assert_int_equal(info->pm1_evt_len, 4);
	assert_int_equal(info->pm1a_cnt_blk, 0x604);
	assert_int_equal(info->pm_tmr_blk, 0x608);
	/* QEMU's values, which the guest's driver tells the machines apart by. */
	assert_int_equal(info->gpe0_blk, machine == MACHINE_Q35 ? 0x620 : 0xafe0);
	assert_int_equal(info->gpe0_blk_len, machine == MACHINE_Q35 ? 16 : 4);
	assert_int_equal(info->smi_cmd, 0);
	assert_int_equal(info->fadt_flags & PLUGVM_ACPI_FADT_HW_REDUCED, 0);
	assert_int_equal(info->dsdt, fadt()->x_dsdt);
	assert_true(info->have_s5);
	assert_int_equal(info->s5_slp_typ, PLUGVM_S5_SLP_TYP);
	assert_int_equal(info->s5_slp_typ, 0);

	assert_true(info->have_madt);
	assert_int_equal(info->lapic_addr, 0xfee00000u);
	assert_int_equal(info->ioapic_addr, 0xfec00000u);
	assert_int_equal(info->ioapic_gsi_base, 0);
	assert_int_equal(info->sci_gsi, 9);
	assert_true(info->sci_level);
	assert_false(info->sci_active_low);

	assert_int_equal(info->nr_cpus, max);
	for (i = 0; i < max; i++) {
		if (info->cpus[i].apic_id != i || info->cpus[i].uid != i)
			fail_msg("cpu %u: apic id %u uid %u", i, info->cpus[i].apic_id,
				 info->cpus[i].uid);
		if (info->cpus[i].enabled != (i < nr))
			fail_msg("cpu %u: enabled %d with %u present", i, info->cpus[i].enabled,
				 nr);
		assert_false(info->cpus[i].online_capable);
	}

	/* Raw MADT: LAPIC entries for IDs 0..254, x2APIC entries from 255 on. */
	for (k = 0;; k++) {
		struct plugvm_madt_entry *e = madt_entry(k);

		if (e->type == PLUGVM_MADT_LAPIC) {
			assert_int_equal(((struct plugvm_madt_lapic *)e)->apic_id, n_lapic);
			n_lapic++;
		} else if (e->type == PLUGVM_MADT_X2APIC) {
			assert_int_equal(((struct plugvm_madt_x2apic *)e)->x2apic_id,
					 255 + n_x2apic);
			n_x2apic++;
		}
		if ((uint8_t *)e + e->length >= (uint8_t *)madt() + madt()->length)
			break;
	}
	assert_int_equal(n_lapic, max < 255 ? max : 255);
	assert_int_equal(n_x2apic, max < 255 ? 0 : max - 255);

	/* Lookup by signature in the root table. */
	assert_ptr_equal(acpi_find_table(PLUGVM_ACPI_SIG_FADT), fadt());
	assert_ptr_equal(acpi_find_table(PLUGVM_ACPI_SIG_MADT), madt());
	assert_null(acpi_find_table("SSDT"));
	assert_null(acpi_find_table(PLUGVM_ACPI_SIG_DSDT)); /* reached through the FADT only */
}

/* ---- good tables ---------------------------------------------------------------------- */

static void test_good_tables(void **state)
{
	static const unsigned cfgs[][2] = {
		{ 1, 1 },   { 4, 8 },	  { 255, 300 },	  { 1, 1024 }, { 1, 255 },
		{ 1, 256 }, { 254, 255 }, { 1024, 1024 }, { 2, 3 },
	};
	static const enum config_machine machines[] = { MACHINE_PC, MACHINE_Q35 };
	size_t i, m;

	(void)state;
	for (m = 0; m < 2; m++) {
		machine = machines[m];
		for (i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
			build(cfgs[i][0], cfgs[i][1]);
			check_checksums();
			check_parse(cfgs[i][0], cfgs[i][1]);
		}
	}
	machine = MACHINE_PC;
}

/* The DSDT's OperationRegion (PRST, SystemIO, base, 0x0C): its bytes, as QEMU's DSDT has it. */
static void check_prst(uint16_t base)
{
	const uint8_t want[] = { 0x5b, 0x80, 'P',  'R',		  'S',
				 'T',  0x01, 0x0b, (uint8_t)base, (uint8_t)(base >> 8),
				 0x0a, 0x0c };
	const struct plugvm_acpi_header *h = dsdt();
	const uint8_t *p = (const uint8_t *)h;
	unsigned i, found = 0;

	for (i = sizeof(*h); i + sizeof(want) <= h->length; i++)
		found += !memcmp(p + i, want, sizeof(want));
	assert_int_equal(found, 1);
}

/*
 * Each machine's FADT and DSDT name the ports its layout gives the devices: the 32-bit
 * fields and their 64-bit GAS twins agree, GPE0 is where QEMU's pc (0xafe0, 4 bytes) or
 * q35 (PM1a_EVT + 0x20, 16 bytes: the rule the guest's driver finds ICH9 by) has it, and
 * the DSDT's CPU hotplug OperationRegion is at 0xaf00 or 0x0cd8.
 */
static void test_layouts_match_the_tables(void **state)
{
	static const struct {
		enum config_machine m;
		uint16_t gpe0, gpe0_len, cpuhp;
	} want[] = {
		{ MACHINE_PC, 0xafe0, 4, 0xaf00 },
		{ MACHINE_Q35, 0x620, 16, 0x0cd8 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct acpi_layout *l = acpi_layout_of(want[i].m);
		struct plugvm_acpi_fadt *f;

		assert_non_null(l);
		assert_int_equal(l->gpe0_base, want[i].gpe0);
		assert_int_equal(l->gpe0_len, want[i].gpe0_len);
		assert_int_equal(l->cpuhp_base, want[i].cpuhp);
		assert_int_equal(l->cpuhp_gpe_bit, 2);
		assert_int_equal(l->pm_base, 0x600);
		machine = want[i].m;
		build(2, 4);
		f = fadt();
		assert_int_equal(f->pm1a_evt_blk, l->pm_base);
		assert_int_equal(f->x_pm1a_evt_blk.address, l->pm_base);
		assert_int_equal(f->pm1a_cnt_blk, l->pm_base + 4);
		assert_int_equal(f->x_pm1a_cnt_blk.address, l->pm_base + 4);
		assert_int_equal(f->pm_tmr_blk, l->pm_base + 8);
		assert_int_equal(f->x_pm_tmr_blk.address, l->pm_base + 8);
		assert_int_equal(f->gpe0_blk, want[i].gpe0);
		assert_int_equal(f->gpe0_blk_len, want[i].gpe0_len);
		assert_int_equal(f->x_gpe0_blk.space_id, 1);
		assert_int_equal(f->x_gpe0_blk.address, want[i].gpe0);
		assert_int_equal(f->x_gpe0_blk.bit_width, 8 * want[i].gpe0_len);
		assert_int_equal(f->sci_int, 9);
		assert_int_equal(f->smi_cmd, 0);
		check_prst(want[i].cpuhp);
		assert_int_equal(parse(ACPI_BASE), 0);
		assert_int_equal(acpi_get_info()->nr_warnings, 0);
	}
	machine = MACHINE_PC;
	/* Not a machine: no layout, and no tables without one. */
	assert_null(acpi_layout_of((enum config_machine)2));
	assert_null(acpi_layout_of((enum config_machine) - 1));
}

static void test_rsdt_only(void **state)
{
	const struct acpi_info *info = acpi_get_info();

	(void)state;
	/* An ACPI 1.0 RSDP (revision 0, 20 bytes) leads to the RSDT. */
	build(2, 4);
	rsdp()->revision = 0;
	rsdp()->xsdt_address = 0xdeadbeef000ull; /* ignored at revision 0 */
	fix_rsdp(rsdp());
	rsdp()->extended_checksum ^= 0x55; /* not checked at revision 0 */
	assert_int_equal(parse(ACPI_BASE), 0);
	assert_int_equal(info->nr_warnings, 0);
	assert_true(info->have_fadt);
	assert_true(info->have_s5);
	assert_int_equal(info->nr_cpus, 4);

	/* A revision 2 RSDP without an XSDT. */
	build(2, 4);
	rsdp()->xsdt_address = 0;
	fix_rsdp(rsdp());
	assert_int_equal(parse(ACPI_BASE), 0);
	assert_int_equal(info->nr_warnings, 0);
	assert_int_equal(info->nr_cpus, 4);
}

static void test_builder_limits(void **state)
{
	const struct acpi_layout *pc = acpi_layout_of(MACHINE_PC);
	struct acpi_config cfg = { .nr_cpus = 4, .max_cpus = 8, .layout = pc };
	uint64_t need, size;

	(void)state;
	memset(ram, 0, RAM_SIZE);
	/* Refused configurations. */
	assert_int_equal(acpi_build(ram + ACPI_BASE, ACPI_SIZE, ACPI_BASE + 8, &cfg), 0);
	cfg = (struct acpi_config){ 4, 8, NULL };
	assert_int_equal(acpi_build(ram + ACPI_BASE, ACPI_SIZE, ACPI_BASE, &cfg), 0);
	cfg = (struct acpi_config){ 0, 8, pc };
	assert_int_equal(acpi_build(ram + ACPI_BASE, ACPI_SIZE, ACPI_BASE, &cfg), 0);
	cfg = (struct acpi_config){ 9, 8, pc };
	assert_int_equal(acpi_build(ram + ACPI_BASE, ACPI_SIZE, ACPI_BASE, &cfg), 0);
	cfg = (struct acpi_config){ 1, PLUGVM_MAX_CPUS + 1, pc };
	assert_int_equal(acpi_build(ram + ACPI_BASE, ACPI_SIZE, ACPI_BASE, &cfg), 0);
	/* Tables must sit below 4 GiB (the RSDT holds 32-bit addresses). */
	cfg = (struct acpi_config){ 1, 1024, pc };
	assert_int_equal(acpi_build(ram + ACPI_BASE, ACPI_SIZE, 0xffffe000ull, &cfg), 0);
	assert_int_equal(acpi_build(ram + ACPI_BASE, ACPI_SIZE, 0x100000000ull, &cfg), 0);

	/* The smallest buffer that holds them, found from the largest; one byte less fails. */
	cfg = (struct acpi_config){ 1, 1024, pc };
	for (need = ACPI_SIZE; need > 0; need--)
		if (!acpi_build(ram + ACPI_BASE, need - 1, ACPI_BASE, &cfg))
			break;
	assert_true(need > 1024 * 8);
	for (size = 0; size < need; size += size < 64 ? 1 : 97)
		assert_int_equal(acpi_build(ram + ACPI_BASE, size, ACPI_BASE, &cfg), 0);
	/* The builder writes nothing past `size`. */
	memset(ram + ACPI_BASE, 0xcc, ACPI_SIZE);
	assert_int_equal(acpi_build(ram + ACPI_BASE, need, ACPI_BASE, &cfg), ACPI_BASE);
	assert_int_equal(ram[ACPI_BASE + need], 0xcc);
	assert_int_equal(parse(ACPI_BASE), 0);
	assert_int_equal(acpi_get_info()->nr_cpus, 1024);
}

/* ---- refusals ------------------------------------------------------------------------- */

static void expect_warning(const char *needle)
{
	assert_true(acpi_get_info()->nr_warnings > 0);
	assert_contains(con.buf, needle);
}

static void test_bad_rsdp(void **state)
{
	const struct acpi_info *info = acpi_get_info();

	(void)state;
	build(4, 8);
	rsdp()->checksum ^= 1;
	assert_int_equal(parse(ACPI_BASE), -ENODEV);
	expect_warning("ACPI: RSDP at 0xe0000 refused: bad signature or checksum");
	assert_false(info->have_fadt);
	assert_false(info->have_madt);
	assert_int_equal(info->nr_cpus, 0);

	build(4, 8);
	rsdp()->extended_checksum ^= 1;
	assert_int_equal(parse(ACPI_BASE), -ENODEV);
	expect_warning("RSDP at 0xe0000 refused");

	build(4, 8);
	rsdp()->signature[7] = '!';
	fix_rsdp(rsdp());
	assert_int_equal(parse(ACPI_BASE), -ENODEV);
	expect_warning("RSDP at 0xe0000 refused");

	build(4, 8);
	rsdp()->length = 4097;
	fix_rsdp(rsdp());
	assert_int_equal(parse(ACPI_BASE), -ENODEV);
	build(4, 8);
	rsdp()->length = 20;
	fix_rsdp(rsdp());
	assert_int_equal(parse(ACPI_BASE), -ENODEV);

	/* An RSDP at the very end of memory whose length runs past it. */
	build(4, 8);
	memcpy(ram + RAM_SIZE - 20, rsdp(), 20);
	assert_int_equal(parse(RAM_SIZE - 20), -ENODEV);
	expect_warning("refused");
	/* An ACPI 1.0 RSDP is 20 bytes: at the very end of memory it is fine. */
	build(4, 8);
	rsdp()->revision = 0;
	fix_rsdp(rsdp());
	memcpy(ram + RAM_SIZE - 20, rsdp(), 20);
	assert_int_equal(parse(RAM_SIZE - 20), 0);
	assert_int_equal(acpi_get_info()->nr_warnings, 0);
	assert_int_equal(acpi_get_info()->nr_cpus, 8);
	/* Outside memory altogether. */
	assert_int_equal(parse(RAM_SIZE), -ENODEV);
	assert_int_equal(parse(UINT64_MAX - 3), -ENODEV);
	expect_warning("refused");
}

static void test_bad_root(void **state)
{
	const struct acpi_info *info = acpi_get_info();

	(void)state;
	/* A bad XSDT: the parser falls back to the RSDT and says so. */
	build(4, 8);
	assert_int_equal(rsdp()->rsdt_address, 0xe0030);
	assert_int_equal(rsdp()->xsdt_address, 0xe0060);
	xsdt()->checksum ^= 0x10;
	assert_int_equal(parse(ACPI_BASE), 0);
	expect_warning("XSDT at 0xe0060 refused: bad checksum");
	assert_int_equal(info->nr_warnings, 1);
	assert_true(info->have_fadt);
	assert_int_equal(info->nr_cpus, 8);

	build(4, 8);
	memcpy(xsdt()->signature, "XSDX", 4);
	fix_checksum(xsdt());
	assert_int_equal(parse(ACPI_BASE), 0);
	expect_warning("XSDT at 0xe0060 refused: wrong signature");
	assert_int_equal(info->nr_cpus, 8);

	build(4, 8);
	rsdp()->xsdt_address = RAM_SIZE - 8;
	fix_rsdp(rsdp());
	assert_int_equal(parse(ACPI_BASE), 0);
	expect_warning("XSDT at 0xffff8 refused: outside the memory map");

	/* Both roots bad: nothing to go on. */
	build(4, 8);
	xsdt()->checksum ^= 0x10;
	rsdt()->checksum ^= 0x10;
	assert_int_equal(parse(ACPI_BASE), -ENODEV);
	expect_warning("RSDT at 0xe0030 refused: bad checksum");
	assert_int_equal(info->nr_warnings, 2);
	assert_false(info->have_fadt);
	assert_null(acpi_find_table(PLUGVM_ACPI_SIG_FADT));

	/* Root lengths: too short, huge, running past memory. */
	build(4, 8);
	xsdt()->length = 35;
	rsdt()->length = 17u << 20;
	assert_int_equal(parse(ACPI_BASE), -ENODEV);
	expect_warning("XSDT at 0xe0060 refused: bad length");
	expect_warning("RSDT at 0xe0030 refused: bad length");

	/* An XSDT running past memory, and no RSDT to fall back to. */
	build(4, 8);
	xsdt()->length = (uint32_t)(RAM_SIZE - rsdp()->xsdt_address + 1);
	rsdp()->rsdt_address = 0;
	fix_rsdp(rsdp());
	assert_int_equal(parse(ACPI_BASE), -ENODEV);
	expect_warning("XSDT at 0xe0060 refused: length runs outside the memory map");

	/* Root entries pointing nowhere: tables are not found, nothing crashes. */
	build(4, 8);
	{
		uint64_t bogus[2] = { UINT64_MAX - 16, RAM_SIZE - 4 };

		memcpy(xsdt() + 1, bogus, sizeof(bogus));
		fix_checksum(xsdt());
	}
	assert_int_equal(parse(ACPI_BASE), 0);
	assert_false(info->have_fadt);
	assert_false(info->have_madt);
}

static void test_bad_tables(void **state)
{
	const struct acpi_info *info = acpi_get_info();
	struct plugvm_acpi_header *h;

	(void)state;
	/* FADT checksum: no fixed hardware; the MADT is still read, without the SCI override. */
	build(4, 8);
	fadt()->header.checksum ^= 0xff;
	assert_int_equal(parse(ACPI_BASE), 0);
	expect_warning("ACPI: FACP at ");
	expect_warning("refused: bad checksum");
	assert_int_equal(info->nr_warnings, 1);
	assert_false(info->have_fadt);
	assert_false(info->have_s5);
	assert_true(info->have_madt);
	assert_int_equal(info->nr_cpus, 8);
	assert_int_equal(info->sci_gsi, 0);

	/* MADT checksum: no CPUs. */
	build(4, 8);
	madt()->checksum ^= 0xff;
	assert_int_equal(parse(ACPI_BASE), 0);
	expect_warning("APIC at ");
	expect_warning("bad checksum");
	assert_true(info->have_fadt);
	assert_false(info->have_madt);
	assert_int_equal(info->nr_cpus, 0);

	/* DSDT checksum and signature: no \_S5, the rest stands. */
	build(4, 8);
	dsdt()->checksum ^= 0xff;
	assert_int_equal(parse(ACPI_BASE), 0);
	expect_warning("DSDT at ");
	assert_true(info->have_fadt);
	assert_false(info->have_s5);
	build(4, 8);
	memcpy(dsdt()->signature, "SSDT", 4);
	fix_checksum(dsdt());
	assert_int_equal(parse(ACPI_BASE), 0);
	expect_warning("refused: wrong signature");
	assert_false(info->have_s5);

	/* A FADT shorter than revision 1. */
	build(4, 8);
	fadt()->header.length = PLUGVM_ACPI_FADT_REV1_LEN - 1;
	fix_checksum(&fadt()->header);
	assert_int_equal(parse(ACPI_BASE), 0);
	expect_warning("FACP at 0 refused: shorter than a revision 1 FADT");
	assert_false(info->have_fadt);

	/* A revision 1 FADT (116 bytes) still works: 32-bit DSDT pointer, no X_ fields. */
	build(4, 8);
	fadt()->header.length = PLUGVM_ACPI_FADT_REV1_LEN;
	fadt()->header.revision = 1;
	fix_checksum(&fadt()->header);
	assert_int_equal(parse(ACPI_BASE), 0);
	assert_int_equal(info->nr_warnings, 0);
	assert_true(info->have_fadt);
	assert_true(info->have_s5);
	assert_int_equal(info->sleep_control.address, 0);

	/* Table lengths running past memory, huge, or below a header. */
	build(4, 8);
	madt()->length = (uint32_t)(RAM_SIZE - ((uint8_t *)madt() - ram) + 1);
	assert_int_equal(parse(ACPI_BASE), 0);
	expect_warning("APIC at ");
	expect_warning("refused: length runs outside the memory map");
	assert_false(info->have_madt);
	build(4, 8);
	madt()->length = 0xffffffffu;
	assert_int_equal(parse(ACPI_BASE), 0);
	expect_warning("refused: bad length");
	build(4, 8);
	dsdt()->length = 3;
	assert_int_equal(parse(ACPI_BASE), 0);
	expect_warning("DSDT at ");
	expect_warning("refused: bad length");
	assert_false(info->have_s5);

	/* A DSDT pointer outside memory. */
	build(4, 8);
	fadt()->x_dsdt = 0x4000000000ull;
	fix_checksum(&fadt()->header);
	assert_int_equal(parse(ACPI_BASE), 0);
	expect_warning("DSDT at 0x4000000000 refused: outside the memory map");
	assert_false(info->have_s5);

	/* A FADT whose signature is wrong is simply another table: not found, not used. */
	build(4, 8);
	h = &fadt()->header;
	memcpy(h->signature, "FACQ", 4);
	fix_checksum(h);
	assert_int_equal(parse(ACPI_BASE), 0);
	assert_false(info->have_fadt);
	assert_true(info->have_madt);
}

static void test_bad_madt_entries(void **state)
{
	const struct acpi_info *info = acpi_get_info();
	struct plugvm_madt_entry *e;

	(void)state;
	/* Length 0 in the fourth CPU entry: the first three stay, the rest is refused. */
	build(4, 8);
	madt_entry(3)->length = 0;
	fix_checksum(madt());
	assert_int_equal(parse(ACPI_BASE), 0);
	expect_warning("ACPI: APIC at 0 refused: entry runs past the table end");
	assert_true(info->have_madt);
	assert_int_equal(info->nr_cpus, 3);
	assert_int_equal(info->ioapic_addr, 0);

	build(4, 8);
	madt_entry(0)->length = 1;
	fix_checksum(madt());
	assert_int_equal(parse(ACPI_BASE), 0);
	expect_warning("entry runs past the table end");
	assert_int_equal(info->nr_cpus, 0);

	/* The last entry running past the end of the table. */
	build(4, 8);
	{
		unsigned k = 0;

		while ((uint8_t *)madt_entry(k) + madt_entry(k)->length <
		       (uint8_t *)madt() + madt()->length)
			k++;
		e = madt_entry(k);
	}
	e->length = (uint8_t)(e->length + 1);
	fix_checksum(madt());
	assert_int_equal(parse(ACPI_BASE), 0);
	expect_warning("entry runs past the table end");
	assert_int_equal(info->nr_cpus, 8); /* read before the bad entry */

	/* A table cut in the middle of an entry header is just shorter. */
	build(4, 8);
	madt()->length = (uint32_t)((uint8_t *)madt_entry(2) - (uint8_t *)madt() + 1);
	fix_checksum(madt());
	assert_int_equal(parse(ACPI_BASE), 0);
	assert_int_equal(info->nr_cpus, 2);

	/* Short CPU entries are skipped, unknown types ignored. */
	build(4, 8);
	madt_entry(1)->length = 7; /* LAPIC entries are 8 bytes: swallows a byte of #2 */
	madt_entry(0)->type = 0x7f;
	fix_checksum(madt());
	assert_int_equal(parse(ACPI_BASE), 0);
	assert_true(info->have_madt);

	/* A duplicate APIC ID is listed once. */
	build(4, 8);
	((struct plugvm_madt_lapic *)madt_entry(5))->apic_id = 2;
	fix_checksum(madt());
	assert_int_equal(parse(ACPI_BASE), 0);
	expect_warning("MADT lists APIC ID 2 twice; second entry ignored");
	assert_int_equal(info->nr_cpus, 7);

	/* An x2APIC ID far beyond the table size is still just an ID. */
	build(1, 300);
	((struct plugvm_madt_x2apic *)madt_entry(299))->x2apic_id = 0xfffffffe;
	fix_checksum(madt());
	assert_int_equal(parse(ACPI_BASE), 0);
	assert_int_equal(info->nr_warnings, 0);
	assert_int_equal(info->cpus[299].apic_id, 0xfffffffe);
}

static void test_madt_overflow_cpus(void **state)
{
	const struct acpi_info *info = acpi_get_info();
	struct plugvm_madt_x2apic *x;

	(void)state;
	/* More CPUs than the guest's array: turn the NMI entries after the CPUs into CPU 1024. */
	build(1, 1024);
	x = (struct plugvm_madt_x2apic *)madt_entry(1024 + 1); /* ioapic, then ISO 0 */
	assert_int_equal(x->h.type, PLUGVM_MADT_ISO);
	*x = (struct plugvm_madt_x2apic){ .h = { PLUGVM_MADT_X2APIC, 16 },
					  .x2apic_id = 1024,
					  .uid = 1024 };
	/* 16 bytes cover the two 10-byte ISOs' first 16: re-chain the rest as an unknown type. */
	((uint8_t *)x)[16] = 0x7e;
	((uint8_t *)x)[17] = 4;
	fix_checksum(madt());
	assert_int_equal(parse(ACPI_BASE), 0);
	expect_warning("more than 1024 CPUs; APIC ID 1024 ignored");
	assert_int_equal(info->nr_cpus, 1024);
}

static void test_s5_forms(void **state)
{
	const struct acpi_info *info = acpi_get_info();
	struct plugvm_acpi_header *d;
	uint8_t *aml;

	(void)state;
	/* \_S5 with a BytePrefix value, and with a root prefix. */
	build(1, 1);
	d = dsdt();
	aml = (uint8_t *)(d + 1);
	assert_memory_equal(aml, "\x08_S5_\x12", 6);
	aml[8] = 0x0a; /* BytePrefix 0x00 -> replaces the first element (ZeroOp) and the next */
	aml[9] = 5;
	fix_checksum(d);
	assert_int_equal(parse(ACPI_BASE), 0);
	assert_true(info->have_s5);
	assert_int_equal(info->s5_slp_typ, 5);

	build(1, 1);
	aml = (uint8_t *)(dsdt() + 1);
	aml[8] = 0x01; /* OneOp */
	fix_checksum(dsdt());
	assert_int_equal(parse(ACPI_BASE), 0);
	assert_int_equal(info->s5_slp_typ, 1);

	/* An element the scanner does not understand: no \_S5, no guess. */
	build(1, 1);
	aml = (uint8_t *)(dsdt() + 1);
	aml[8] = 0x0b; /* WordPrefix */
	fix_checksum(dsdt());
	assert_int_equal(parse(ACPI_BASE), 0);
	assert_false(info->have_s5);

	/* _S5_ not preceded by NameOp is not a definition. */
	build(1, 1);
	aml = (uint8_t *)(dsdt() + 1);
	aml[0] = 0x10;
	fix_checksum(dsdt());
	assert_int_equal(parse(ACPI_BASE), 0);
	assert_false(info->have_s5);

	/* A DSDT cut right after the name. */
	build(1, 1);
	dsdt()->length = sizeof(struct plugvm_acpi_header) + 9;
	fix_checksum(dsdt());
	assert_int_equal(parse(ACPI_BASE), 0);
	assert_false(info->have_s5);
}

/* ---- the BIOS search ------------------------------------------------------------------ */

static void test_bios_search(void **state)
{
	const struct acpi_info *info = acpi_get_info();
	struct plugvm_acpi_rsdp copy;

	(void)state;
	/* rsdp_pa = 0: found at 0xe0000 by the search. */
	build(4, 8);
	assert_int_equal(parse(0), 0);
	assert_int_equal(info->rsdp, ACPI_BASE);
	assert_int_equal(info->nr_warnings, 0);
	assert_int_equal(info->nr_cpus, 8);

	/* The RSDP moved to the top of the BIOS area (last 16-byte slot that holds it). */
	build(4, 8);
	copy = *rsdp();
	memset(rsdp(), 0, sizeof(copy));
	memcpy(at(0xfffd0), &copy, sizeof(copy));
	assert_int_equal(parse(0), 0);
	assert_int_equal(info->rsdp, 0xfffd0);
	assert_int_equal(info->nr_cpus, 8);

	/* A signature with a bad checksum first, the good RSDP later: the good one wins. */
	build(4, 8);
	copy = *rsdp();
	memcpy(at(0xf0000), &copy, sizeof(copy));
	rsdp()->checksum ^= 1;
	assert_int_equal(parse(0), 0);
	assert_int_equal(info->rsdp, 0xf0000);

	/* In the EBDA, whose segment the BDA holds at 0x40e. */
	build(4, 8);
	copy = *rsdp();
	memset(rsdp(), 0, sizeof(copy));
	memcpy(at(0x9fc00 + 0x40), &copy, sizeof(copy));
	*(uint16_t *)at(0x40e) = 0x9fc0;
	assert_int_equal(parse(0), 0);
	assert_int_equal(info->rsdp, 0x9fc40);
	/* Not 16-byte aligned: not found. */
	memset(at(0x9fc40), 0, sizeof(copy));
	memcpy(at(0x9fc48), &copy, sizeof(copy));
	assert_int_equal(parse(0), -ENODEV);
	expect_warning("RSDP at 0 refused: not found");

	/* The EBDA segment pointing at the end of memory: the search stops at the map. */
	build(4, 8);
	*(uint16_t *)at(0x40e) = 0xfff0;
	assert_int_equal(parse(0), 0);
	assert_int_equal(info->rsdp, ACPI_BASE);

	/* Nothing anywhere. */
	build(4, 8);
	memset(rsdp(), 0, sizeof(copy));
	assert_int_equal(parse(0), -ENODEV);
	expect_warning("RSDP at 0 refused: not found");
	assert_int_equal(info->nr_warnings, 1);

	/* Memory smaller than the BIOS area: the search does not read past it. */
	build(4, 8);
	map_end = 0xe0000 - 1;
	assert_int_equal(parse(0), -ENODEV);
	map_end = RAM_SIZE;
}

static int setup(void **state)
{
	static uint64_t fake_cpu[1024]; /* zeroed: preempt count 0, CPU id 0, any layout */

	(void)state;
	ram = malloc(RAM_SIZE);
	if (!ram)
		return -1;
	shim_set_cpu((struct cpu *)fake_cpu);
	console_register(&con.con);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(ram);
	return 0;
}

UNIT_MAIN(setup, teardown, cmocka_unit_test(test_good_tables),
	  cmocka_unit_test(test_layouts_match_the_tables), cmocka_unit_test(test_rsdt_only),
	  cmocka_unit_test(test_builder_limits), cmocka_unit_test(test_bad_rsdp),
	  cmocka_unit_test(test_bad_root), cmocka_unit_test(test_bad_tables),
	  cmocka_unit_test(test_bad_madt_entries), cmocka_unit_test(test_madt_overflow_cpus),
	  cmocka_unit_test(test_s5_forms), cmocka_unit_test(test_bios_search))
