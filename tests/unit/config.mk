# SPDX-License-Identifier: MIT
# vmm/config/config*.c: QEMU-style flags, -m sizes, -smp topology, --chaos specs.
UNIT_TESTS += test_config
UNIT_test_config_SRCS := $(VMM_CONFIG_SRCS) vmm/log.c
