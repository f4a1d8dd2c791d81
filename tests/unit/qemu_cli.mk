# SPDX-License-Identifier: MIT
# vmm/config/qemu_cli*.c, qemu_opts.c: plugvm-qemu's command line (QEMU's grammar).
UNIT_TESTS += test_qemu_cli
UNIT_test_qemu_cli_SRCS := $(VMM_QEMU_CLI_SRCS) $(VMM_CONFIG_SRCS) vmm/log.c
UNIT_test_qemu_cli_LIBS := -ljson-c
