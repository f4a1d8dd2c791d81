/* SPDX-License-Identifier: MIT */
/*
 * The plugvm VMM <-> guest contract: ABI version, the hypervisor CPUID leaves, and the
 * I/O port map of the emulated platform. Fixed-width types only; no logic.
 *
 * Protocol (how a guest finds and uses plugvm):
 *
 *   1. CPUID 0x40000000 is KVM's own leaf (signature "KVMKVMKVM"); EAX is raised to at
 *      least 0x40000010, where the VMware-style timing leaf gives the TSC and LAPIC-timer
 *      frequencies in kHz (as Cloud Hypervisor and QEMU with invtsc do).
 *   2. CPUID PLUGVM_CPUID_BASE (0x40000100) returns EAX = highest plugvm leaf and the
 *      12-byte signature "plugvmplugvm" in EBX, ECX, EDX. A guest that does not find the
 *      signature runs on another hypervisor and must not use any plugvm extension.
 *   3. CPUID PLUGVM_CPUID_INFO returns EAX = ABI version, EBX = TSC kHz, ECX = LAPIC timer
 *      kHz, EDX = PLUGVM_FEATURE_* bits. A guest refuses extensions whose ABI major differs.
 *   4. Everything else is the PC platform of QEMU's `pc` machine, or of its `q35` with
 *      `--machine q35`, as far as the guest can tell: the ports below, ACPI tables (RSDP,
 *      XSDT, FADT, MADT, DSDT) found through hvm_start_info.rsdp_paddr, a 16550 at COM1,
 *      KVM's LAPIC and IOAPIC. The FADT's GPE0_BLK tells the two apart (PLUGVM_PORT_GPE0
 *      on pc, PLUGVM_PORT_ICH9_GPE0 on q35); only the GPE0 block and the CPU hotplug
 *      block move.
 */
#ifndef PLUGVM_COMMON_ABI_H
#define PLUGVM_COMMON_ABI_H

#include <stdint.h>

/* ABI version: major in the high 16 bits, minor in the low 16 bits. */
#define PLUGVM_ABI_MAJOR   1
#define PLUGVM_ABI_MINOR   2
#define PLUGVM_ABI_VERSION ((PLUGVM_ABI_MAJOR << 16) | PLUGVM_ABI_MINOR)

/* CPUID leaves. */
#define PLUGVM_CPUID_KVM_BASE 0x40000000u
#define PLUGVM_CPUID_TIMING   0x40000010u /* EAX = TSC kHz, EBX = LAPIC bus kHz */
#define PLUGVM_CPUID_BASE     0x40000100u /* EAX = max leaf; EBX,ECX,EDX = signature */
#define PLUGVM_CPUID_INFO \
	0x40000101u /* EAX = ABI, EBX = TSC kHz, ECX = LAPIC kHz, EDX = features */
#define PLUGVM_CPUID_MAX PLUGVM_CPUID_INFO

/* "plugvmplugvm" as the three little-endian registers EBX, ECX, EDX. */
#define PLUGVM_CPUID_SIG_EBX 0x67756c70u /* "plug" */
#define PLUGVM_CPUID_SIG_ECX 0x6c706d76u /* "vmpl" */
#define PLUGVM_CPUID_SIG_EDX 0x6d766775u /* "ugvm" */

/* KVM's emulated LAPIC timer runs at 1 GHz. */
#define PLUGVM_LAPIC_TIMER_KHZ 1000000u

/* Platform I/O ports (QEMU `pc` layout, with SeaBIOS's PM base). */
#define PLUGVM_PORT_COM1	   0x3f8
#define PLUGVM_PORT_COM1_LEN	   8
#define PLUGVM_IRQ_COM1		   4
#define PLUGVM_PORT_DEBUG_EXIT	   0xf4 /* QEMU isa-debug-exit: status = (value << 1) | 1 */
#define PLUGVM_PORT_DEBUG_EXIT_LEN 4
#define PLUGVM_PORT_PM_BASE	   0x600
#define PLUGVM_PORT_PM1A_EVT	   (PLUGVM_PORT_PM_BASE + 0) /* STS +0, EN +2 */
#define PLUGVM_PORT_PM1A_CNT	   (PLUGVM_PORT_PM_BASE + 4)
#define PLUGVM_PORT_PM_TMR	   (PLUGVM_PORT_PM_BASE + 8) /* 24-bit, 3.579545 MHz */
#define PLUGVM_PORT_PM_LEN	   12
#define PLUGVM_PORT_GPE0	   0xafe0 /* STS 0xafe0-1, EN 0xafe2-3 */
#define PLUGVM_PORT_GPE0_LEN	   4
#define PLUGVM_PORT_CPUHP	   0xaf00 /* QEMU's modern ACPI CPU hotplug block */
#define PLUGVM_PORT_CPUHP_LEN	   12
#define PLUGVM_SCI_IRQ		   9 /* level, active high */

/*
 * The same with --machine q35 (QEMU's ICH9 LPC): the PM block, SCI and everything else as
 * above; GPE0 inside the PM block (status 8 bytes, then enable 8 bytes) and the CPU hotplug
 * block at ICH9's base. The CPU hotplug event is GPE0 bit 2 on both machines.
 */
#define PLUGVM_PORT_ICH9_GPE0	  (PLUGVM_PORT_PM_BASE + 0x20) /* STS 0x620-7, EN 0x628-f */
#define PLUGVM_PORT_ICH9_GPE0_LEN 16
#define PLUGVM_PORT_ICH9_CPUHP	  0x0cd8

#define PLUGVM_PM_TMR_HZ	  3579545u
#define PLUGVM_PM1_CNT_SCI_EN	  0x0001u
#define PLUGVM_PM1_CNT_SLP_EN	  0x2000u
#define PLUGVM_PM1_CNT_SLP_TYP(v) (((v)&7u) << 10)
#define PLUGVM_S5_SLP_TYP	  0 /* QEMU's _S5 value, also in plugvm's DSDT */

/* Fixed MMIO addresses. */
#define PLUGVM_IOAPIC_BASE 0xfec00000u
#define PLUGVM_LAPIC_BASE  0xfee00000u

/* Limits. */
#define PLUGVM_MAX_CPUS 1024 /* KVM's limit here; APIC ID == vCPU index */

/* PLUGVM_CPUID_INFO EDX feature bits. */
#define PLUGVM_FEATURE_NONE	      0u
#define PLUGVM_FEATURE_HOTPLUG_REPORT (1u << 0) /* PLUGVM_PORT_HOTPLUG_REPORT exists */
#define PLUGVM_FEATURE_DIRECT_START   (1u << 1) /* PLUGVM_PORT_DIRECT_START exists */
#define PLUGVM_FEATURE_VIRTIO	      (1u << 2) /* virtio-mmio devices: plugvm_virtio.h */

/*
 * Hotplug report (PLUGVM_FEATURE_HOTPLUG_REPORT): after bringing a CPU up or taking it
 * down, the guest fills a struct plugvm_hotplug_report in its RAM and writes its guest-
 * physical address (4-byte aligned, below 4 GiB) with one 32-bit OUT to the port. plugvm
 * reads it, checks every field, and turns it into its PLUGVM_CPU_ONLINE / _OFFLINE QMP
 * event with the guest's duration beside its own. Anything malformed is ignored.
 */
#define PLUGVM_PORT_HOTPLUG_REPORT     0xaf20
#define PLUGVM_PORT_HOTPLUG_REPORT_LEN 4

/*
 * Direct start (PLUGVM_FEATURE_DIRECT_START): instead of INIT-SIPI-SIPI and a real-mode
 * trampoline, the guest fills a struct plugvm_start_ctx and writes its guest-physical
 * address (8-byte aligned, below 4 GiB) with one 32-bit OUT to PLUGVM_PORT_DIRECT_START.
 * plugvm checks it (APIC ID of a present vCPU, entry and stack in RAM, page-aligned CR3 in
 * RAM), writes `status` (0 accepted, else PLUGVM_START_E*) before the OUT completes, and
 * starts that vCPU in 64-bit mode: CS 64-bit flat (selector 0x08), data 0x10, CR0 PE|PG|
 * WP|NE|ET, CR4 PAE, EFER LME|LMA|NXE, the given CR3, RIP = entry, RSP = stack, RDI = arg,
 * GS base = gs_base, interrupts off. A refused start leaves the vCPU alone: the guest falls
 * back to INIT-SIPI-SIPI.
 */
#define PLUGVM_PORT_DIRECT_START     0xaf24
#define PLUGVM_PORT_DIRECT_START_LEN 4

#define PLUGVM_START_OK	    0
#define PLUGVM_START_EAPIC  1 /* no present vCPU with that APIC ID */
#define PLUGVM_START_EADDR  2 /* entry, stack or CR3 outside guest RAM */
#define PLUGVM_START_EINVAL 3 /* reserved fields not zero */

struct plugvm_start_ctx {
	uint32_t apic_id;
	uint32_t status; /* written by plugvm */
	uint64_t entry;
	uint64_t stack;
	uint64_t cr3;
	uint64_t gs_base;
	uint64_t arg;
	uint64_t reserved; /* 0 */
};
_Static_assert(sizeof(struct plugvm_start_ctx) == 56, "start context is 56 bytes");

#define PLUGVM_HOTPLUG_OP_ONLINE  1
#define PLUGVM_HOTPLUG_OP_OFFLINE 2

struct plugvm_hotplug_report {
	uint32_t apic_id;
	uint32_t op; /* PLUGVM_HOTPLUG_OP_* */
	int32_t result; /* 0, or the guest's negative error */
	uint32_t reserved; /* 0 */
	uint64_t guest_ns; /* how long the guest's bring-up / tear-down took */
};
_Static_assert(sizeof(struct plugvm_hotplug_report) == 24, "hotplug report is 24 bytes");

#endif
