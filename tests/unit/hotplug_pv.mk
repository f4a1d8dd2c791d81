# SPDX-License-Identifier: MIT
# vmm/devices/hotplug_pv.c: the paravirt CPU hotplug port over the ACPI block's slots, driven
# through the real I/O bus and guest memory as a (hostile) guest would.
UNIT_TESTS += test_hotplug_pv
UNIT_test_hotplug_pv_SRCS := vmm/devices/hotplug_pv.c vmm/devices/acpi_cpu_hotplug.c \
	vmm/devices/pv_port.c vmm/bus.c vmm/mem.c vmm/log.c $(UNIT_VMM_STUBS)
