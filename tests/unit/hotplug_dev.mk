# SPDX-License-Identifier: MIT
# vmm/devices/cpu_hotplug.c (the ACPI CPU hotplug block on the VM's I/O bus, with acpi_cpu_hotplug.c)
# and the QMP events it emits (qmp.c), driven with the guest's port writes; the control
# socket's CPU bookkeeping, the vCPUs and the PM device are stubs.
UNIT_TESTS += test_hotplug_dev
UNIT_test_hotplug_dev_SRCS := vmm/devices/cpu_hotplug.c vmm/devices/acpi_cpu_hotplug.c vmm/qmp.c vmm/bus.c \
	vmm/mem.c vmm/log.c
UNIT_test_hotplug_dev_LIBS := -ljson-c
