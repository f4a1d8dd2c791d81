# SPDX-License-Identifier: MIT
# guest/kernel/prioq.c: the scheduler's priority-bitmap ready queue.
UNIT_TESTS += test_prioq
UNIT_test_prioq_SRCS := guest/kernel/prioq.c
