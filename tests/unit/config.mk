# SPDX-License-Identifier: MIT
# vmm/config.c: QEMU-style flags, -m sizes, -smp topology.
UNIT_TESTS += test_config
UNIT_test_config_SRCS := vmm/config.c vmm/log.c
