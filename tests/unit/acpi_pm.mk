# SPDX-License-Identifier: MIT
# vmm/devices/acpi_pm.c: the PM1 event/control registers, the PM timer and the GPE0 block.
UNIT_TESTS += test_acpi_pm
UNIT_test_acpi_pm_SRCS := vmm/devices/acpi_pm.c vmm/x86/acpi_layout.c vmm/bus.c vmm/log.c $(UNIT_VMM_STUBS)
