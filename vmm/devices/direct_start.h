/* SPDX-License-Identifier: MIT */
/*
 * plugvm's paravirt direct-start port (plugvm_abi.h, PLUGVM_FEATURE_DIRECT_START): the guest
 * writes the address of a start context; the device copies it once, checks it against guest
 * RAM, hands a valid one to its owner (cpus.c) and writes the status back before the OUT
 * completes. A pure device: it knows nothing of vCPUs but what the callback answers.
 */
#ifndef PLUGVM_VMM_DEVICES_DIRECT_START_H
#define PLUGVM_VMM_DEVICES_DIRECT_START_H

#include <stdbool.h>

#include "../x86/cpu.h"
#include "pv_port.h"

struct vm;

struct direct_start_ops {
	void *opaque;
	/*
	 * Whether a vCPU with `apic_id` (below maxcpus) runs: checked before the addresses,
	 * for the order of plugvm_abi.h's statuses. A hint: start() decides. Any vCPU thread.
	 */
	bool (*running)(void *opaque, unsigned apic_id);
	/*
	 * Start the vCPU with `apic_id` (below maxcpus) in long mode at `r` (its addresses
	 * are RAM). On the writing vCPU's thread. Returns 0, or -EINVAL: no running vCPU has
	 * that APIC ID.
	 */
	int (*start)(void *opaque, unsigned apic_id, const struct long_mode_start *r);
};

struct direct_start {
	struct vm *vm;
	struct direct_start_ops ops;
	struct pv_port port;
	struct log_ratelimit refused_rl; /* the refusals' diagnostics (-v) */
};

/* Put `d` (the caller's) on vm->pio, for vm's RAM and maxcpus. Returns 0 or -errno. */
int direct_start_init(struct direct_start *d, struct vm *vm, const struct direct_start_ops *ops);

#endif
