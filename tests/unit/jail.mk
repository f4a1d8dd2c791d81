# SPDX-License-Identifier: MIT
# vmm/jail.c: the jail root's checks and the descriptor limit (pure), and jail_fork()'s
# refusal of a bad DIR.
UNIT_TESTS += test_jail
UNIT_test_jail_SRCS := vmm/jail.c vmm/runas.c vmm/log.c
UNIT_test_jail_LIBS := -lseccomp
