/* SPDX-License-Identifier: MIT */
/*
 * ACPI table discovery without AML: RSDP -> XSDT/RSDT -> FADT (fixed hardware ports),
 * MADT (CPUs, IOAPIC, interrupt overrides) and a byte scan of the DSDT for \_S5. Every
 * table is checked (signature, length, checksum, inside the memory map); a bad one is
 * refused with a warning and the kernel carries on without it.
 *
 * The arch layer reads them at boot (arch_boot(): they number the CPUs, place the IOAPIC,
 * calibrate the TSC against the PM timer, power off through S5), as Linux's
 * arch/x86/kernel/acpi/boot.c; arch.h passes acpi_get_info() on to drivers (the ACPI CPU
 * hotplug driver's GPE and SCI) and self-tests. Pure C: the host test test_acpi parses the
 * VMM's tables with it.
 */
#ifndef PLUGVM_GUEST_X86_ACPI_H
#define PLUGVM_GUEST_X86_ACPI_H

#include <stdbool.h>
#include <stdint.h>

#include "acpi_tables.h"
#include "plugvm_abi.h"

#define ACPI_MAX_CPUS PLUGVM_MAX_CPUS

struct acpi_cpu {
	uint32_t apic_id;
	uint32_t uid;
	bool enabled; /* present at boot */
	bool online_capable; /* may be hot-added (ACPI 6.3), informational */
};

struct acpi_info {
	uint64_t rsdp;
	bool have_fadt;
	bool have_madt;
	/* FADT */
	uint16_t sci_irq;
	uint32_t smi_cmd;
	uint8_t acpi_enable;
	uint32_t pm1a_evt_blk, pm1a_cnt_blk, pm_tmr_blk, gpe0_blk;
	uint8_t pm1_evt_len, gpe0_blk_len;
	uint32_t fadt_flags;
	struct plugvm_acpi_gas sleep_control; /* HW-reduced sleep register (address 0 = none) */
	uint64_t dsdt;
	bool have_s5;
	uint8_t s5_slp_typ;
	/*
	 * Hardware-reduced ACPI: QEMU's Generic Event Device (ACPI0013) from a DSDT byte scan,
	 * its event selector (read-to-clear, 32-bit MMIO) and its interrupt (_CRS).
	 */
	bool have_ged;
	uint64_t ged_evt_sel;
	uint32_t ged_gsi;
	bool ged_level, ged_active_low;
	/* MADT */
	uint32_t lapic_addr;
	uint32_t ioapic_addr;
	uint32_t ioapic_gsi_base;
	uint32_t sci_gsi; /* after interrupt source overrides */
	bool sci_level, sci_active_low;
	unsigned nr_cpus; /* possible CPUs, in MADT order */
	struct acpi_cpu cpus[ACPI_MAX_CPUS];
	unsigned nr_warnings; /* tables or entries refused */
};

/*
 * Provided by the memory-map code (boot.c; a host test brings its own): a pointer through
 * which [pa, pa + len) can be read, or NULL if that range is not memory the firmware could
 * have put tables in.
 */
void *acpi_os_map(uint64_t pa, uint64_t len);

/*
 * Parse the tables from the RSDP at `rsdp_pa` (0: search the BIOS areas). Returns 0 if
 * at least the RSDP and its root table were good, else -ENODEV; acpi_get_info() is valid
 * (possibly empty) either way.
 */
int acpi_init(uint64_t rsdp_pa);
const struct acpi_info *acpi_get_info(void);

/* Table lookup by signature in the root table (after acpi_init), validated, or NULL. */
const struct plugvm_acpi_header *acpi_find_table(const char sig[4]);

#endif
