# SPDX-License-Identifier: MIT
# vmm/devices/cphp.c: QEMU's ACPI CPU hotplug register block (legacy bitmap, the switch,
# the modern block's selector, events, commands, eject and _OST).
UNIT_TESTS += test_cphp
UNIT_test_cphp_SRCS := vmm/devices/cphp.c
