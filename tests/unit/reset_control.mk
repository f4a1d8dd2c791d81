# SPDX-License-Identifier: MIT
# vmm/devices/reset_control.c: the reset control register at 0xcf9 through the port bus.
UNIT_TESTS += test_reset_control
UNIT_test_reset_control_SRCS := vmm/devices/reset_control.c vmm/bus.c vmm/log.c $(UNIT_VMM_STUBS)
