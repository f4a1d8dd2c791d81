/* SPDX-License-Identifier: MIT */
/*
 * Guest-physical layout of a plugvm VM (x86, QEMU `pc`-like):
 *
 *   0x00000000  real-mode IVT/BDA page, left alone
 *   0x00001000  hvm_start_info, then the memory map
 *   0x00002000  guest command line (4 KiB)
 *   0x0009fc00  "EBDA" (reserved) .. 0x000a0000; VGA/ROM hole up to 1 MiB
 *   0x000e0000  ACPI tables, RSDP first (reserved, inside the BIOS search range)
 *   0x00100000  kernel (PT_LOAD segments must lie at or above 1 MiB), then free RAM
 *   0xc0000000  end of low RAM: the 32-bit MMIO hole (IOAPIC, LAPIC, KVM's TSS) up to 4 GiB
 *   0x100000000 RAM beyond 3 GiB
 */
#ifndef PLUGVM_VMM_X86_LAYOUT_H
#define PLUGVM_VMM_X86_LAYOUT_H

#define LAYOUT_START_INFO	 0x1000ull
#define LAYOUT_MEMMAP		 0x1100ull
#define LAYOUT_MEMMAP_MAX	 32
#define LAYOUT_CMDLINE		 0x2000ull
#define LAYOUT_CMDLINE_MAX	 0x1000ull
#define LAYOUT_EBDA		 0x9fc00ull
#define LAYOUT_ACPI_BASE	 0xe0000ull
#define LAYOUT_ACPI_SIZE	 0x20000ull
#define LAYOUT_KERNEL_MIN	 0x100000ull
#define LAYOUT_LOW_RAM_MAX	 0xc0000000ull
#define LAYOUT_HIGH_RAM_BASE	 0x100000000ull
#define LAYOUT_KVM_IDENTITY_MAP	 0xfeffc000ull /* 1 page, Intel real-mode support */
#define LAYOUT_KVM_TSS		 0xfeffd000ull /* 3 pages */
#define LAYOUT_KVM_RESERVED_SIZE 0x4000ull

#endif
