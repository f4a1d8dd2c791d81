# SPDX-License-Identifier: MIT
# guest/kernel/mm.c: page allocator and kmalloc over a host buffer (panic() is the test's).
UNIT_TESTS += test_mm
UNIT_test_mm_SRCS := guest/kernel/mm.c
