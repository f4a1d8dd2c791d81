# SPDX-License-Identifier: MIT
# vmm/console.c: the guest console's bounded output buffer and its writer thread, against
# pipes that are read, stalled and closed, and a regular file.
UNIT_TESTS += test_console
UNIT_test_console_SRCS := vmm/console.c vmm/log.c vmm/sandbox.c
UNIT_test_console_LIBS += -lseccomp
