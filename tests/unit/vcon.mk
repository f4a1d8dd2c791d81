# SPDX-License-Identifier: MIT
# vmm/devices/virtio_console.c on the real transport (virtio_mmio.c) and bus, driven from
# the host side as a guest's vCPUs would; the agent is the test's, KVM's interrupt line a stub.
UNIT_TESTS += test_vcon
UNIT_test_vcon_SRCS := vmm/devices/virtio_console.c vmm/devices/virtio_mmio.c vmm/bus.c \
	vmm/console.c vmm/mem.c vmm/log.c vmm/sandbox.c $(UNIT_VMM_STUBS)
UNIT_test_vcon_LIBS += -lseccomp
