# SPDX-License-Identifier: MIT
# vmm/devices/latency.c: the guest's registration and its shared area, written by the test
# as a hostile guest would, read back through the real I/O bus and guest memory.
UNIT_TESTS += test_latency
UNIT_test_latency_SRCS := vmm/devices/latency.c vmm/devices/pv_port.c vmm/bus.c vmm/mem.c \
	vmm/log.c $(UNIT_VMM_STUBS)
