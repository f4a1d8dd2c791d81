# SPDX-License-Identifier: MIT
# vmm/devices/virtio_mmio.c: the virtio-mmio v2 transport and split virtqueues under a
# hostile driver; vmm/control/agent_frame.c: agent message framing and header checks.
UNIT_TESTS += test_virtio
UNIT_test_virtio_SRCS := vmm/devices/virtio_mmio.c vmm/control/agent_frame.c vmm/mem.c vmm/log.c
