# SPDX-License-Identifier: MIT
# vmm/bus.c: PIO/MMIO range registration and dispatch.
UNIT_TESTS += test_bus
UNIT_test_bus_SRCS := vmm/bus.c vmm/log.c
