/* SPDX-License-Identifier: MIT */
/*
 * /dev/kvm and the VM file descriptor: capability checks, memory slots, the in-kernel
 * irqchip. The memory slots are set before the irqchip is created, and there is no PIT: KVM
 * charges a grace period for a slot set after the irqchip, and a PIT at teardown (the
 * figures are in docs/design.md's "Where it runs").
 */
#ifndef PLUGVM_VMM_KVM_H
#define PLUGVM_VMM_KVM_H

#include <stdbool.h>
#include <stdint.h>

#include "mem.h"

struct chaos;

struct kvm {
	int dev_fd; /* /dev/kvm */
	int vm_fd;
	int run_size; /* size of each vCPU's kvm_run mapping */
	unsigned max_vcpus; /* KVM_CAP_MAX_VCPUS (or NR_VCPUS) */
	bool tsc_deadline; /* KVM_CAP_TSC_DEADLINE_TIMER */
	struct kvm_cpuid2 *supported_cpuid;
	struct chaos *chaos; /* --chaos with irq delays: line changes go through it; else NULL */
	struct kvm_irqchip *irqchip_reset; /* PICs and IOAPIC as created, for system_reset */
};

/*
 * Open `dev_path` (normally /dev/kvm), check the API and the capabilities plugvm needs,
 * and create a VM. Returns 0 or -errno with a logged message that names the device.
 */
int kvm_open(struct kvm *k, const char *dev_path);

/*
 * Whether `dev_path` is a KVM device this process may use (opened read-write, KVM's API),
 * without a VM: 0 with KVM's vCPU limit in *max_vcpus (as kvm_open() reads it), or -errno.
 * Logs nothing (a probe: the caller says what it means).
 */
int kvm_probe(const char *dev_path, unsigned *max_vcpus);

/*
 * Register guest RAM as memory slots, then create the in-kernel irqchip (IOAPIC, PICs,
 * one LAPIC per vCPU created afterwards). Must run before any vCPU exists. Returns 0 or
 * -errno (logged).
 */
int kvm_setup_memory_and_irqchip(struct kvm *k, const struct guest_mem *m);

/*
 * Set a GSI's input level on the in-kernel irqchip, through --chaos (which may apply it
 * later, in order, without blocking) when k->chaos is set. Thread-safe; the changes of one
 * line must be serialised by the caller (its device lock). Returns 0 or -errno (a delayed
 * change's failure is logged by chaos.c instead).
 */
/*
 * The PICs and the IOAPIC back to the state they were created in (system_reset), once
 * every device lowered its lines. Returns 0 or -errno (logged).
 */
int kvm_irqchip_reset(struct kvm *k);

int kvm_irq_line(struct kvm *k, uint32_t gsi, int level);

/*
 * A fixed, edge-triggered, physical-destination MSI with `vector` to the LAPIC with APIC ID
 * `dest` (below 256), through the in-kernel irqchip. Returns 0 or -errno.
 */
int kvm_signal_msi(struct kvm *k, uint32_t dest, uint32_t vector);

/* kvm_irq_line() now, bypassing --chaos: chaos.c's injection. Returns 0 or -errno. */
int kvm_irq_line_now(void *kvm, uint32_t gsi, int level);

void kvm_close(struct kvm *k);

#endif
