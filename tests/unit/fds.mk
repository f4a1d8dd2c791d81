# SPDX-License-Identifier: MIT
# vmm/fds.c: closing inherited descriptors at start, but those the command line names.
UNIT_TESTS += test_fds
UNIT_test_fds_SRCS := vmm/fds.c
