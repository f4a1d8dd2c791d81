/* SPDX-License-Identifier: MIT */
/*
 * ACPI table layouts (ACPI 6.x) that plugvm builds and the guest parses: RSDP, the common
 * table header, FADT, MADT and its entry types. Packed, fixed-width, no logic.
 */
#ifndef PLUGVM_COMMON_ACPI_TABLES_H
#define PLUGVM_COMMON_ACPI_TABLES_H

#include <stdint.h>

#define PLUGVM_ACPI_RSDP_SIG "RSD PTR "
#define PLUGVM_ACPI_SIG_XSDT "XSDT"
#define PLUGVM_ACPI_SIG_RSDT "RSDT"
#define PLUGVM_ACPI_SIG_FADT "FACP"
#define PLUGVM_ACPI_SIG_MADT "APIC"
#define PLUGVM_ACPI_SIG_DSDT "DSDT"

struct plugvm_acpi_rsdp {
	char signature[8];
	uint8_t checksum; /* over the first 20 bytes */
	char oem_id[6];
	uint8_t revision; /* 0 = ACPI 1.0 (20 bytes), 2 = ACPI 2.0+ */
	uint32_t rsdt_address;
	uint32_t length; /* revision >= 2 */
	uint64_t xsdt_address;
	uint8_t extended_checksum; /* over the whole structure */
	uint8_t reserved[3];
} __attribute__((packed));

struct plugvm_acpi_header {
	char signature[4];
	uint32_t length;
	uint8_t revision;
	uint8_t checksum; /* whole table sums to 0 */
	char oem_id[6];
	char oem_table_id[8];
	uint32_t oem_revision;
	uint32_t creator_id;
	uint32_t creator_revision;
} __attribute__((packed));

struct plugvm_acpi_gas {
	uint8_t space_id; /* 0 memory, 1 system I/O */
	uint8_t bit_width;
	uint8_t bit_offset;
	uint8_t access_size;
	uint64_t address;
} __attribute__((packed));

/* FADT up to revision 6; a revision 1 table (QEMU `pc`) ends at x_... (116 bytes). */
struct plugvm_acpi_fadt {
	struct plugvm_acpi_header header;
	uint32_t firmware_ctrl;
	uint32_t dsdt;
	uint8_t reserved0;
	uint8_t preferred_pm_profile;
	uint16_t sci_int; /* @46 */
	uint32_t smi_cmd; /* @48 */
	uint8_t acpi_enable;
	uint8_t acpi_disable;
	uint8_t s4bios_req;
	uint8_t pstate_cnt;
	uint32_t pm1a_evt_blk; /* @56 */
	uint32_t pm1b_evt_blk;
	uint32_t pm1a_cnt_blk; /* @64 */
	uint32_t pm1b_cnt_blk;
	uint32_t pm2_cnt_blk;
	uint32_t pm_tmr_blk; /* @76 */
	uint32_t gpe0_blk; /* @80 */
	uint32_t gpe1_blk;
	uint8_t pm1_evt_len; /* @88 */
	uint8_t pm1_cnt_len;
	uint8_t pm2_cnt_len;
	uint8_t pm_tmr_len;
	uint8_t gpe0_blk_len; /* @92 */
	uint8_t gpe1_blk_len;
	uint8_t gpe1_base;
	uint8_t cst_cnt;
	uint16_t p_lvl2_lat;
	uint16_t p_lvl3_lat;
	uint16_t flush_size;
	uint16_t flush_stride;
	uint8_t duty_offset;
	uint8_t duty_width;
	uint8_t day_alrm;
	uint8_t mon_alrm;
	uint8_t century;
	uint16_t iapc_boot_arch;
	uint8_t reserved1;
	uint32_t flags; /* @112 */
	struct plugvm_acpi_gas reset_reg; /* @116: revision >= 2 from here */
	uint8_t reset_value;
	uint16_t arm_boot_arch;
	uint8_t minor_version;
	uint64_t x_firmware_ctrl;
	uint64_t x_dsdt; /* @140 */
	struct plugvm_acpi_gas x_pm1a_evt_blk;
	struct plugvm_acpi_gas x_pm1b_evt_blk;
	struct plugvm_acpi_gas x_pm1a_cnt_blk;
	struct plugvm_acpi_gas x_pm1b_cnt_blk;
	struct plugvm_acpi_gas x_pm2_cnt_blk;
	struct plugvm_acpi_gas x_pm_tmr_blk;
	struct plugvm_acpi_gas x_gpe0_blk;
	struct plugvm_acpi_gas x_gpe1_blk;
	struct plugvm_acpi_gas sleep_control_reg; /* @244: revision >= 5 */
	struct plugvm_acpi_gas sleep_status_reg;
	uint64_t hypervisor_vendor_id; /* @268: revision 6 */
} __attribute__((packed));

#define PLUGVM_ACPI_FADT_REV1_LEN    116
#define PLUGVM_ACPI_FADT_WBINVD	     (1u << 0)
#define PLUGVM_ACPI_FADT_PROC_C1     (1u << 2)
#define PLUGVM_ACPI_FADT_SLP_BUTTON  (1u << 5)
#define PLUGVM_ACPI_FADT_RTC_S4	     (1u << 7)
#define PLUGVM_ACPI_FADT_TMR_VAL_EXT (1u << 8)
#define PLUGVM_ACPI_FADT_HW_REDUCED  (1u << 20)

struct plugvm_acpi_madt {
	struct plugvm_acpi_header header;
	uint32_t lapic_address;
	uint32_t flags; /* bit 0: PC-AT compatible 8259s present */
} __attribute__((packed));

#define PLUGVM_MADT_PCAT_COMPAT 1u

/* MADT entry types. */
#define PLUGVM_MADT_LAPIC      0
#define PLUGVM_MADT_IOAPIC     1
#define PLUGVM_MADT_ISO	       2
#define PLUGVM_MADT_LAPIC_NMI  4
#define PLUGVM_MADT_X2APIC     9
#define PLUGVM_MADT_X2APIC_NMI 10

#define PLUGVM_MADT_CPU_ENABLED	       1u
#define PLUGVM_MADT_CPU_ONLINE_CAPABLE 2u

struct plugvm_madt_entry {
	uint8_t type;
	uint8_t length;
} __attribute__((packed));

struct plugvm_madt_lapic {
	struct plugvm_madt_entry h;
	uint8_t uid;
	uint8_t apic_id;
	uint32_t flags;
} __attribute__((packed));

struct plugvm_madt_ioapic {
	struct plugvm_madt_entry h;
	uint8_t id;
	uint8_t reserved;
	uint32_t address;
	uint32_t gsi_base;
} __attribute__((packed));

struct plugvm_madt_iso {
	struct plugvm_madt_entry h;
	uint8_t bus;
	uint8_t source;
	uint32_t gsi;
	uint16_t flags; /* bits 0-1 polarity, 2-3 trigger */
} __attribute__((packed));

#define PLUGVM_MADT_ISO_ACTIVE_HIGH 0x1u
#define PLUGVM_MADT_ISO_ACTIVE_LOW  0x3u
#define PLUGVM_MADT_ISO_EDGE	    0x4u
#define PLUGVM_MADT_ISO_LEVEL	    0xcu

struct plugvm_madt_lapic_nmi {
	struct plugvm_madt_entry h;
	uint8_t uid;
	uint16_t flags;
	uint8_t lint;
} __attribute__((packed));

struct plugvm_madt_x2apic {
	struct plugvm_madt_entry h;
	uint16_t reserved;
	uint32_t x2apic_id;
	uint32_t flags;
	uint32_t uid;
} __attribute__((packed));

_Static_assert(sizeof(struct plugvm_acpi_rsdp) == 36, "RSDP is 36 bytes");
_Static_assert(sizeof(struct plugvm_acpi_header) == 36, "SDT header is 36 bytes");
_Static_assert(sizeof(struct plugvm_acpi_gas) == 12, "GAS is 12 bytes");
_Static_assert(sizeof(struct plugvm_acpi_fadt) == 276, "FADT rev 6 is 276 bytes");
_Static_assert(__builtin_offsetof(struct plugvm_acpi_fadt, sci_int) == 46, "SCI_INT @46");
_Static_assert(__builtin_offsetof(struct plugvm_acpi_fadt, gpe0_blk) == 80, "GPE0_BLK @80");
_Static_assert(__builtin_offsetof(struct plugvm_acpi_fadt, flags) == 112, "Flags @112");
_Static_assert(__builtin_offsetof(struct plugvm_acpi_fadt, x_dsdt) == 140, "X_DSDT @140");
_Static_assert(__builtin_offsetof(struct plugvm_acpi_fadt, sleep_control_reg) == 244, "@244");
_Static_assert(sizeof(struct plugvm_acpi_madt) == 44, "MADT header is 44 bytes");
_Static_assert(sizeof(struct plugvm_madt_lapic) == 8, "LAPIC entry is 8 bytes");
_Static_assert(sizeof(struct plugvm_madt_ioapic) == 12, "IOAPIC entry is 12 bytes");
_Static_assert(sizeof(struct plugvm_madt_iso) == 10, "ISO entry is 10 bytes");
_Static_assert(sizeof(struct plugvm_madt_lapic_nmi) == 6, "LAPIC NMI entry is 6 bytes");
_Static_assert(sizeof(struct plugvm_madt_x2apic) == 16, "x2APIC entry is 16 bytes");

#endif
