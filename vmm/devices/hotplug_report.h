/* SPDX-License-Identifier: MIT */
/*
 * plugvm's paravirt hotplug report port (plugvm_abi.h, PLUGVM_FEATURE_HOTPLUG_REPORT): after
 * a CPU comes up or goes down, the guest writes the address of a report; the device copies
 * it once, checks every field and hands a valid one to its owner (cpus.c). A pure device.
 */
#ifndef PLUGVM_VMM_DEVICES_HOTPLUG_REPORT_H
#define PLUGVM_VMM_DEVICES_HOTPLUG_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "pv_port.h"

struct vm;

struct hotplug_report_ops {
	void *opaque;
	/*
	 * The guest reports the CPU with `apic_id` (below maxcpus) online (or offline) with
	 * `result` (0 or its -errno) after `guest_ns`. On the writing vCPU's thread.
	 */
	void (*report)(void *opaque, unsigned apic_id, bool online, int32_t result,
		       uint64_t guest_ns);
};

struct hotplug_report {
	struct vm *vm;
	struct hotplug_report_ops ops;
	struct pv_port port;
};

/* Put `d` (the caller's) on vm->pio, for vm's RAM and maxcpus. Returns 0 or -errno. */
int hotplug_report_init(struct hotplug_report *d, struct vm *vm,
			const struct hotplug_report_ops *ops);

#endif
