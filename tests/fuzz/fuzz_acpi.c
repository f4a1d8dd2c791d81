// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the guest's ACPI parser (guest/arch/x86/acpi.c) over input bytes placed
 * as guest memory at the ACPI base (0xe0000). Byte 0 picks how the RSDP is found: bit 0
 * set, by the BIOS search; clear, at 0xe0000 directly. The seeds are tables built by the
 * VMM, so mutations walk the whole RSDP -> XSDT/RSDT -> FADT/MADT/DSDT chain.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "guest/arch/x86/acpi.h"

#define ACPI_BASE 0xe0000ull

static const uint8_t *image;
static size_t image_len;

void *acpi_os_map(uint64_t pa, uint64_t len)
{
	if (pa < ACPI_BASE || pa - ACPI_BASE > image_len || len > image_len - (pa - ACPI_BASE))
		return NULL;
	return (void *)(image + (pa - ACPI_BASE));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t fake_cpu[1024];
	const struct acpi_info *info;
	unsigned i, j;

	if (size < 1)
		return 0;
	shim_set_cpu((struct cpu *)fake_cpu);
	image = data + 1;
	image_len = size - 1;
	acpi_init(data[0] & 1 ? 0 : ACPI_BASE);
	info = acpi_get_info();
	if (info->nr_cpus > ACPI_MAX_CPUS)
		abort();
	/* The parser drops duplicate APIC IDs (checked over the first 64 CPUs). */
	for (i = 0; i < info->nr_cpus && i < 64; i++)
		for (j = 0; j < i; j++)
			if (info->cpus[i].apic_id == info->cpus[j].apic_id)
				abort();
	if (info->nr_cpus && !info->have_madt)
		abort();
	acpi_find_table("FACP");
	acpi_find_table("APIC");
	acpi_find_table("DSDT");
	if (size >= 5)
		acpi_find_table((const char *)data + 1);
	return 0;
}
