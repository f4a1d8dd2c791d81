# SPDX-License-Identifier: MIT
# guest/kernel/mm.c: page allocator and kmalloc over a host buffer. Bad frees end in the
# guest's panic() (panic.c, printk.c); printk.c's vsnprintf/snprintf are renamed so that
# libc and cmocka keep their own.
UNIT_TESTS += test_mm
UNIT_test_mm_SRCS := guest/kernel/mm.c guest/kernel/panic.c guest/kernel/printk.c
UNIT_test_mm_CFLAGS := -Dvsnprintf=guest_vsnprintf -Dsnprintf=guest_snprintf
