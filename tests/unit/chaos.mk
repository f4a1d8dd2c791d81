# SPDX-License-Identifier: MIT
# vmm/chaos.c: --chaos's streams, draws, interrupt-delay FIFO and vCPU stalls.
UNIT_TESTS += test_chaos
UNIT_test_chaos_SRCS := vmm/chaos.c $(VMM_CONFIG_SRCS) vmm/log.c vmm/sandbox.c
UNIT_test_chaos_LIBS += -lseccomp
