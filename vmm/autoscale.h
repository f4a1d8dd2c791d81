/* SPDX-License-Identifier: MIT */
/*
 * vCPUs on demand (docs/autoscale.md): once a period, the main thread samples every present
 * vCPU (the guest's load record, devices/load.h, checked and confirmed against the vCPU
 * thread's own run time; the run time alone when the guest reports nothing), asks the policy
 * (autoscale_policy.h) and carries out its decision with cpus_add() or
 * cpus_request_removal(), one at a time. Every decision and outcome is an event. Main thread,
 * except autoscale_cpus_event().
 */
#ifndef PLUGVM_VMM_AUTOSCALE_H
#define PLUGVM_VMM_AUTOSCALE_H

#include <stdbool.h>
#include <stdint.h>

#include "autoscale_policy.h"
#include "config/config.h"

struct vm;
struct cpus_event;

/* What an event says happened (QMP PLUGVM_AUTOSCALE's "action"). */
enum autoscale_event_kind {
	AUTOSCALE_EV_DECIDED, /* an add or removal starts: op, slot, reason, figures */
	AUTOSCALE_EV_DONE, /* it ended: op, slot, result (0, -EBUSY refused, else failed) */
	AUTOSCALE_EV_HELD, /* a removal is due but every candidate is held or refused */
	AUTOSCALE_EV_RANGE, /* an operator's add or removal moved min or max */
	AUTOSCALE_EV_ON, /* enabled or new parameters */
	AUTOSCALE_EV_OFF, /* disabled */
};

struct autoscale_event {
	enum autoscale_event_kind kind;
	enum autoscale_op op;
	unsigned slot;
	const char *id; /* the vCPU's QMP id (may be NULL) */
	enum autoscale_reason reason;
	int result;
	struct autoscale_figures fig;
	unsigned min, max;
};

/* Counters and figures for QMP query-autoscale. */
struct autoscale_status {
	bool enabled, waiting; /* waiting: for the guest to handle hotplug */
	struct autoscale_params p; /* min, max resolved while enabled */
	struct autoscale_figures fig; /* the last sample's */
	enum autoscale_op inflight;
	unsigned inflight_slot;
	uint64_t samples, adds, removes, refused, failed, manual;
	uint64_t implausible; /* guest records that failed a check (host figures used) */
	uint64_t unconfirmed; /* guest busy figures cut to what the host measured */
	uint64_t present_vcpu_ms; /* sum over present vCPUs of the time present, while enabled */
	const struct autoscale_cpu_in *cpu; /* [nr_slots]: the last sample, per slot */
	unsigned nr_slots;
};

/* vm->autoscale, started with cfg->autoscale. Returns 0 or -errno (logged). */
int autoscale_create(struct vm *vm);
void autoscale_destroy(struct vm *vm);
/* Who hears of the events (control_autoscale.c); `e` lives for the call. Main thread. */
void autoscale_set_event_fn(struct vm *vm,
			    void (*fn)(void *opaque, const struct autoscale_event *e),
			    void *opaque);

/* Milliseconds to the next sample (-1: off). */
int autoscale_next_timeout_ms(struct vm *vm);
/* Take what the vCPUs reported and, when a period passed, sample and decide. */
void autoscale_process(struct vm *vm);
/* A vCPU lifecycle event (cpus.h), on whichever thread it comes: kept for the main thread. */
void autoscale_cpus_event(struct vm *vm, const struct cpus_event *e);
/* The operator's device_add / device_del of the vCPU in `slot` was accepted (control_cpus.c). */
void autoscale_manual(struct vm *vm, enum autoscale_op op, unsigned slot);
/*
 * An operator's device_add names the id and slot of a present vCPU the policy added (libvirt
 * cannot see those, and `virsh setvcpus` asks for them again): true if it was, and it is the
 * operator's now, as if just added (autoscale_manual()); false otherwise (the add is a
 * duplicate). test_libvirt_plugvm.py: test_libvirt_adopts_the_vcpus_autoscaling_adds.
 */
bool autoscale_adopt(struct vm *vm, unsigned slot);

/*
 * Enable with `p` (or change the parameters). Returns 0, or -EINVAL with err set (min > max,
 * max > maxcpus).
 */
int autoscale_enable(struct vm *vm, const struct autoscale_params *p, char *err, size_t errlen);
/* Stop deciding; an operation in flight completes on its own. */
void autoscale_disable(struct vm *vm);
void autoscale_get_status(struct vm *vm, struct autoscale_status *s);

#endif
