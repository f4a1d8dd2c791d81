# SPDX-License-Identifier: MIT
# guest/kernel/timer_wheel.c (the non-cascading wheel) and guest/kernel/timerqueue.c (the
# hrtimer red-black queue): pure data structures, tested against reference models.
# TW_SRCDIR lets test_timer_wheel find timer_wheel.h, whose design table it checks.
UNIT_TESTS += test_timer_wheel test_timerqueue
UNIT_test_timer_wheel_SRCS := guest/kernel/timer_wheel.c
UNIT_test_timer_wheel_CFLAGS := -DTW_SRCDIR=\"$(CURDIR)\"
UNIT_test_timerqueue_SRCS := guest/kernel/timerqueue.c
