// SPDX-License-Identifier: MIT
/*
 * The machines' ACPI port layouts (see acpi_layout.h). Values are QEMU 7.2's with SeaBIOS's
 * PM base (hypervisor-interfaces.md section 1.1); the CPU hotplug event is bit 2 on both.
 */
#include "acpi_layout.h"

#include <stddef.h>

#include "plugvm_abi.h"

static const struct acpi_layout layouts[] = {
	[MACHINE_PC] = {
		.name = "pc",
		.chipset = "i440FX/PIIX4",
		.pm_base = PLUGVM_PORT_PM_BASE,
		.pm_len = PLUGVM_PORT_PM_LEN,
		.gpe0_base = PLUGVM_PORT_GPE0,
		.gpe0_len = PLUGVM_PORT_GPE0_LEN,
		.cpuhp_base = PLUGVM_PORT_CPUHP,
		.cpuhp_gpe_bit = 2,
	},
	[MACHINE_Q35] = {
		.name = "q35",
		.chipset = "ICH9",
		.pm_base = PLUGVM_PORT_PM_BASE,
		.pm_len = PLUGVM_PORT_PM_LEN,
		.gpe0_base = PLUGVM_PORT_ICH9_GPE0,
		.gpe0_len = PLUGVM_PORT_ICH9_GPE0_LEN,
		.cpuhp_base = PLUGVM_PORT_ICH9_CPUHP,
		.cpuhp_gpe_bit = 2,
	},
};

_Static_assert(PLUGVM_PORT_GPE0_LEN <= ACPI_LAYOUT_GPE0_MAX_LEN &&
		   PLUGVM_PORT_ICH9_GPE0_LEN <= ACPI_LAYOUT_GPE0_MAX_LEN,
	       "every GPE0 block fits the PM device's registers");

const struct acpi_layout *acpi_layout_of(enum config_machine machine)
{
	if ((unsigned)machine >= sizeof(layouts) / sizeof(layouts[0]))
		return NULL;
	return &layouts[machine];
}
