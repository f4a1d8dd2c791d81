# SPDX-License-Identifier: MIT
# guest/drivers/monitor_input.c: the console monitor's line editor and its echo, through the
# guest's printk.c console list (vsnprintf/snprintf renamed so libc and cmocka keep theirs).
UNIT_TESTS += test_monitor
UNIT_test_monitor_SRCS := guest/drivers/monitor_input.c guest/kernel/printk.c
UNIT_test_monitor_CFLAGS := -Dvsnprintf=guest_vsnprintf -Dsnprintf=guest_snprintf
