# SPDX-License-Identifier: MIT
# guest/kernel/cmdline.c: the guest command line (flags, values, numbers, lists).
UNIT_TESTS += test_cmdline
UNIT_test_cmdline_SRCS := guest/kernel/cmdline.c
