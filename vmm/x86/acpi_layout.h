/* SPDX-License-Identifier: MIT */
/*
 * The ACPI fixed-hardware ports of each machine plugvm presents, chosen here and nowhere
 * else: QEMU's pc (i440FX, PIIX4 PM) and q35 (ICH9 LPC). The PM device, the CPU hotplug
 * block and the FADT/DSDT all take their ports from one struct acpi_layout, so the tables
 * always name the ports the devices answer on (test_acpi: test_layouts_match_the_tables).
 */
#ifndef PLUGVM_VMM_X86_ACPI_LAYOUT_H
#define PLUGVM_VMM_X86_ACPI_LAYOUT_H

#include <stdint.h>

#include "../config/config.h"

#define ACPI_LAYOUT_GPE0_MAX_LEN 16 /* the longest GPE0 block of any layout (q35's) */

struct acpi_layout {
	const char *name; /* QEMU's machine alias: "pc", "q35" */
	const char *chipset; /* "i440FX/PIIX4", "ICH9" */
	uint16_t pm_base; /* PM1a_EVT (STS +0, EN +2), PM1a_CNT +4, PM_TMR +8 */
	uint16_t pm_len;
	uint16_t gpe0_base; /* status in the first half, enable in the second */
	uint16_t gpe0_len; /* even, at most ACPI_LAYOUT_GPE0_MAX_LEN */
	uint16_t cpuhp_base; /* the legacy 32-byte bitmap, then the modern 12-byte block */
	uint8_t cpuhp_gpe_bit; /* the CPU hotplug event's GPE0 status bit */
};

/* The layout of `machine`, or NULL for a value outside enum config_machine. Pure. */
const struct acpi_layout *acpi_layout_of(enum config_machine machine);

#endif
