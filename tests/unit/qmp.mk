# SPDX-License-Identifier: MIT
# vmm/control/qmp_*.c: the QMP protocol of one session (greeting, negotiation, dispatch,
# errors, streaming input, limits), the event queue and its throttling, and the server's
# limits on socket clients.
UNIT_TESTS += test_qmp
UNIT_test_qmp_SRCS := $(VMM_QMP_SRCS) vmm/log.c $(UNIT_QMP_CLIENT)
UNIT_test_qmp_LIBS := -ljson-c -Wl,--wrap=listen
