# SPDX-License-Identifier: MIT
# guest/kernel/rq.c: the scheduler's priority-bitmap ready queue.
UNIT_TESTS += test_rq
UNIT_test_rq_SRCS := guest/kernel/rq.c
