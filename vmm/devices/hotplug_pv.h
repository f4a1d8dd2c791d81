/* SPDX-License-Identifier: MIT */
/*
 * plugvm's paravirt CPU hotplug port (common/plugvm_hotplug.h, PLUGVM_FEATURE_HOTPLUG_PV):
 * LISTEN and DONE commands written as the address of a request (pv_port.h), a claim read,
 * all over the ACPI block's slots (acpi_cpu_hotplug.h, the pv_* functions). A pure device:
 * its owner (cpus.c) sends the notification and takes the report. Tests: test_hotplug_pv.c,
 * test_hotplug.py.
 */
#ifndef PLUGVM_VMM_DEVICES_HOTPLUG_PV_H
#define PLUGVM_VMM_DEVICES_HOTPLUG_PV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "acpi_cpu_hotplug.h"
#include "pv_port.h"

struct vm;

struct hotplug_pv_ops {
	void *opaque;
	/* A fixed, edge-triggered MSI with `vector` to APIC ID `dest` (below 256). */
	void (*notify)(void *opaque, uint32_t vector, uint32_t dest);
	/* As hotplug_report_ops.report: the DONE of a CPU, on the writing vCPU's thread. */
	void (*report)(void *opaque, unsigned apic_id, bool online, int32_t result,
		       uint64_t guest_ns);
};

struct hotplug_pv {
	struct vm *vm;
	struct acpi_cpu_hotplug *block;
	struct hotplug_pv_ops ops;
	struct pv_port port;
	/* Set by a LISTEN (a vCPU thread), read by notify (under the block's lock) and claims. */
	_Atomic uint64_t area; /* 0: not listening */
	_Atomic uint32_t vector;
	_Atomic uint32_t dest;
	struct log_ratelimit refused_rl;
};

/* Put `d` (the caller's) on vm->pio over `block`. Returns 0 or -errno. */
int hotplug_pv_init(struct hotplug_pv *d, struct vm *vm, struct acpi_cpu_hotplug *block,
		    const struct hotplug_pv_ops *ops);

/* The block's notify_pv: the notification to the listening guest. */
void hotplug_pv_notify(struct hotplug_pv *d);

/* Back to power-on state (system_reset): nobody listens. The block is reset by its owner. */
void hotplug_pv_reset(struct hotplug_pv *d);

#endif
