/* SPDX-License-Identifier: MIT */
/*
 * `--dump-acpi DIR` (debugging): the tables acpi_build() made, one binary file per table
 * (rsdp.dat, xsdt.dat, rsdt.dat, facp.dat, apic.dat, dsdt.dat), as ACPICA's `iasl -d` and
 * `acpixtract` users expect them.
 */
#ifndef PLUGVM_VMM_X86_ACPI_DUMP_H
#define PLUGVM_VMM_X86_ACPI_DUMP_H

#include <stdint.h>

#include "../mem.h"

/*
 * Write the tables found from the RSDP at the start of `buf` (guest address `base`, `size`
 * bytes) into directory `dir` (created if missing). Every pointer is range-checked against
 * `buf`. Returns 0 or -errno (logged, naming the file).
 */
int acpi_dump(const uint8_t *buf, uint64_t size, gpa_t base, const char *dir);

#endif
