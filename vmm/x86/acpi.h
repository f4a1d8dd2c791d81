/* SPDX-License-Identifier: MIT */
/*
 * ACPI tables in QEMU's `pc` or `q35` layout (acpi_layout.h): RSDP, RSDT/XSDT, FADT (PM1a,
 * PM timer, the layout's GPE0 block, SCI on IRQ 9), MADT listing every possible CPU (absent
 * ones disabled), and a minimal DSDT (\_S5 and the OperationRegion of the layout's CPU
 * hotplug register block).
 */
#ifndef PLUGVM_VMM_X86_ACPI_H
#define PLUGVM_VMM_X86_ACPI_H

#include <stdint.h>

#include "../mem.h"
#include "acpi_layout.h"

struct acpi_config {
	unsigned nr_cpus; /* CPUs present at boot: APIC IDs 0 .. nr_cpus-1 */
	unsigned max_cpus; /* possible CPUs: APIC IDs 0 .. max_cpus-1 */
	const struct acpi_layout *layout; /* the machine's ports (acpi_layout_of()) */
};

/*
 * Build the tables into `buf`, which the guest sees at `base` (16-byte aligned), at most
 * `size` bytes. Returns the RSDP's guest address (== base), or 0 if they do not fit or
 * cfg is not valid (no layout, no CPU, more present than possible, past PLUGVM_MAX_CPUS).
 * Pure: no I/O.
 */
gpa_t acpi_build(uint8_t *buf, uint64_t size, gpa_t base, const struct acpi_config *cfg);

/* Sum of `len` bytes modulo 256 (0 for a valid table). */
uint8_t acpi_checksum(const void *p, uint64_t len);

#endif
