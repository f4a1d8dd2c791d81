# SPDX-License-Identifier: MIT
# vmm/x86/e820.c: the guest memory map and hvm_start_info (over vmm/mem.c).
UNIT_TESTS += test_e820
UNIT_test_e820_SRCS := vmm/x86/e820.c vmm/mem.c vmm/log.c
