# SPDX-License-Identifier: MIT
# guest/kernel/sched_load.c: each CPU's busy and wait accumulators and its load latch
# (common/plugvm_load.h), driven through idle entries and exits and ticks.
UNIT_TESTS += test_sched_load
UNIT_test_sched_load_SRCS := guest/kernel/sched_load.c
