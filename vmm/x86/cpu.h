/* SPDX-License-Identifier: MIT */
/* Per-vCPU x86 state: CPUID (KVM's supported set plus plugvm's leaves), entry registers, dumps. */
#ifndef PLUGVM_VMM_X86_CPU_H
#define PLUGVM_VMM_X86_CPU_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct kvm_cpuid2;

struct cpuid_config {
	unsigned max_cpus;
	uint32_t tsc_khz; /* 0 if unknown: the timing leaves are left out */
	bool tsc_deadline; /* offer TSC-deadline mode (KVM_CAP_TSC_DEADLINE_TIMER) */
	uint32_t features; /* PLUGVM_FEATURE_* */
	bool no_arch_caps; /* hide IA32_ARCH_CAPABILITIES (CPUID.7.0:EDX[29]), as QEMU's
			      -cpu host,arch-capabilities=off */
};

/*
 * Build the CPUID table for the vCPU with `apic_id` from KVM's supported list: topology
 * leaves, the hypervisor bit, TSC-deadline, KVM's leaf raised to cover the timing leaf,
 * and plugvm's leaves. Returns a malloc'd table or NULL (out of memory).
 */
struct kvm_cpuid2 *cpuid_build(const struct kvm_cpuid2 *supported, const struct cpuid_config *cfg,
			       uint32_t apic_id);

/* Set PVH entry state on a vCPU: 32-bit flat protected mode, EIP = entry, EBX = start_info. */
int regs_setup_pvh(int vcpu_fd, uint32_t entry, uint32_t start_info);

/* plugvm's paravirt direct start (plugvm_abi.h): where a vCPU starts in long mode. */
struct long_mode_start {
	uint64_t entry, stack, cr3, gs_base, arg;
};

/*
 * Put a vCPU in 64-bit mode at r->entry: flat CS 0x08 / data 0x10, paging with r->cr3,
 * RSP = stack, RDI = arg, GS base, interrupts off. Returns 0 or -1 (errno set).
 */
int regs_setup_long_mode(int vcpu_fd, const struct long_mode_start *r);

/*
 * Print the vCPU's registers (and, if `insn` is non-NULL, the `insn_len` instruction
 * bytes at RIP) to `f`, one block. Best effort: prints what the ioctls return.
 */
void regs_dump(FILE *f, int vcpu_fd, int vcpu_id, const uint8_t *insn, unsigned insn_len);

/* Guest-physical address of the linear address `la` in the vCPU's current mode, or -1. */
int64_t regs_translate(int vcpu_fd, uint64_t la);

#endif
