# SPDX-License-Identifier: MIT
# vmm/control/qmp.c: the QMP protocol of one session (greeting, negotiation, dispatch, errors,
# streaming input, limits) and the server's event queue, without sockets.
UNIT_TESTS += test_qmp
UNIT_test_qmp_SRCS := vmm/control/qmp.c vmm/log.c
UNIT_test_qmp_LIBS := -ljson-c
