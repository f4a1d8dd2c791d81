/* SPDX-License-Identifier: MIT */
/*
 * The PVH boot ABI (Xen's x86/HVM direct boot protocol, as QEMU and plugvm implement it):
 * the ELF note that names the 32-bit entry point, and the start-of-day structures the
 * loader leaves in guest memory with EBX pointing at hvm_start_info.
 */
#ifndef PLUGVM_COMMON_PVH_H
#define PLUGVM_COMMON_PVH_H

#include <stdint.h>

#define PLUGVM_PVH_NOTE_NAME	     "Xen"
#define PLUGVM_PVH_NOTE_PHYS32_ENTRY 18 /* XEN_ELFNOTE_PHYS32_ENTRY */
#define PLUGVM_PVH_START_MAGIC	     0x336ec578u /* "xEn3" with 0x80 set on 'E' */
#define PLUGVM_PVH_START_VERSION     1

/* Memory map entry types (E820 numbering). */
#define PLUGVM_PVH_MEMMAP_RAM	   1
#define PLUGVM_PVH_MEMMAP_RESERVED 2
#define PLUGVM_PVH_MEMMAP_ACPI	   3
#define PLUGVM_PVH_MEMMAP_NVS	   4
#define PLUGVM_PVH_MEMMAP_UNUSABLE 5

/* All addresses are guest-physical; 0 means absent. */
struct plugvm_pvh_start_info {
	uint32_t magic;
	uint32_t version;
	uint32_t flags;
	uint32_t nr_modules;
	uint64_t modlist_paddr;
	uint64_t cmdline_paddr;
	uint64_t rsdp_paddr;
	uint64_t memmap_paddr; /* version >= 1 */
	uint32_t memmap_entries; /* version >= 1 */
	uint32_t reserved;
};

struct plugvm_pvh_memmap_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
	uint32_t reserved;
};

struct plugvm_pvh_modlist_entry {
	uint64_t paddr;
	uint64_t size;
	uint64_t cmdline_paddr;
	uint64_t reserved;
};

_Static_assert(sizeof(struct plugvm_pvh_start_info) == 56, "hvm_start_info is 56 bytes");
_Static_assert(__builtin_offsetof(struct plugvm_pvh_start_info, rsdp_paddr) == 32, "rsdp @32");
_Static_assert(__builtin_offsetof(struct plugvm_pvh_start_info, memmap_entries) == 48, "@48");
_Static_assert(sizeof(struct plugvm_pvh_memmap_entry) == 24, "memmap entry is 24 bytes");
_Static_assert(sizeof(struct plugvm_pvh_modlist_entry) == 32, "modlist entry is 32 bytes");

#endif
