# SPDX-License-Identifier: MIT
# ACPI: the VMM's table builder cross-checked with the guest's parser. The guest's
# printk.c defines vsnprintf/snprintf; rename them so libc (and cmocka) keep their own.
UNIT_TESTS += test_acpi
UNIT_test_acpi_SRCS := vmm/x86/acpi.c vmm/x86/acpi_layout.c guest/arch/x86/acpi.c guest/kernel/printk.c
UNIT_test_acpi_CFLAGS := -Dvsnprintf=guest_vsnprintf -Dsnprintf=guest_snprintf
