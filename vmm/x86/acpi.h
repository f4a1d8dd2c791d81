/* SPDX-License-Identifier: MIT */
/*
 * ACPI tables in QEMU `pc` layout: RSDP, RSDT/XSDT, FADT (PM1a, PM timer, GPE0 at
 * 0xafe0, SCI on IRQ 9), MADT listing every possible CPU (absent ones disabled), and a
 * minimal DSDT (\_S5 and the CPU hotplug register block's OperationRegion).
 */
#ifndef PLUGVM_VMM_X86_ACPI_H
#define PLUGVM_VMM_X86_ACPI_H

#include <stdint.h>

#include "../mem.h"

struct acpi_config {
	unsigned nr_cpus; /* CPUs present at boot: APIC IDs 0 .. nr_cpus-1 */
	unsigned max_cpus; /* possible CPUs: APIC IDs 0 .. max_cpus-1 */
};

/*
 * Build the tables into `buf`, which the guest sees at `base` (16-byte aligned), at most
 * `size` bytes. Returns the RSDP's guest address (== base), or 0 if they do not fit.
 * Pure: no I/O.
 */
gpa_t acpi_build(uint8_t *buf, uint64_t size, gpa_t base, const struct acpi_config *cfg);

/* Sum of `len` bytes modulo 256 (0 for a valid table). */
uint8_t acpi_checksum(const void *p, uint64_t len);

#endif
