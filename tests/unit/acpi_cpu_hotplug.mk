# SPDX-License-Identifier: MIT
# vmm/devices/acpi_cpu_hotplug.c: QEMU's ACPI CPU hotplug register block (legacy bitmap, the
# switch, the modern block's selector, events, commands, eject and _OST).
UNIT_TESTS += test_acpi_cpu_hotplug
UNIT_test_acpi_cpu_hotplug_SRCS := vmm/devices/acpi_cpu_hotplug.c vmm/bus.c vmm/log.c
