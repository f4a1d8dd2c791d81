# SPDX-License-Identifier: MIT
# guest/kernel/printk.c: the guest's vsnprintf against the host's, printk and consoles.
# The guest's vsnprintf/snprintf are renamed so that libc (and cmocka) keep their own.
UNIT_TESTS += test_printk
UNIT_test_printk_SRCS := guest/kernel/printk.c
UNIT_test_printk_CFLAGS := -Dvsnprintf=guest_vsnprintf -Dsnprintf=guest_snprintf
