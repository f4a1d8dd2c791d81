/* SPDX-License-Identifier: MIT */
/*
 * The vCPU lifecycle's state, shared by cpus.c (the state machine, the only writer of a
 * slot's state) and cpus_query.c (read-only views, NMIs and dumps); nothing else includes
 * it. The lock and ownership rules are the fields' comments below.
 */
#ifndef PLUGVM_VMM_CPUS_INTERNAL_H
#define PLUGVM_VMM_CPUS_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cpus.h"
#include "devices/acpi_cpu_hotplug.h"
#include "devices/direct_start.h"
#include "devices/hotplug_pv.h"
#include "devices/hotplug_report.h"
#include "vcpu.h"

enum slot_state {
	SLOT_ABSENT, /* no vCPU fd yet */
	SLOT_PARKED, /* fd kept, no thread */
	SLOT_RUNNING, /* fd and thread */
	SLOT_STOPPING, /* its thread was told to end; the main thread joins it */
};

struct cpu_slot {
	struct vcpu vcpu;
	_Atomic int state; /* enum slot_state: written under cpus->lock, read anywhere */
	char *id; /* the QMP id given at add; main thread */
	_Atomic uint64_t request_ns; /* CLOCK_MONOTONIC of the add or removal asked; 0: none */
	/*
	 * A removal in flight: its deadline (CLOCK_MONOTONIC; 0: none), set by the request and
	 * cleared by the main thread that reports or ends it. unplug_refused: the deadline of
	 * the removal the guest refused (its failing _OST, on a vCPU thread), so a refusal
	 * counts only for the removal it answered: the removal in flight is refused while the
	 * two are equal (removal_due_ns()).
	 */
	_Atomic uint64_t unplug_deadline;
	_Atomic uint64_t unplug_refused;
	atomic_bool eject_pending; /* the guest ejected it; the main loop parks it */
	bool spare; /* created ahead of its first hot-add, never run since; main thread */
};

struct cpus {
	struct vm *vm;
	unsigned nr; /* cfg->max_cpus */
	struct cpu_slot *slots;
	pthread_mutex_t lock; /* slot state changes, and direct starts (see cpus.h) */
	bool started, boot_started; /* main thread */
	/* --spare-vcpus: wanted, slots with `spare` set, the lowest slot that may have no vCPU */
	unsigned spares_wanted, spares, spare_scan; /* main thread */
	_Atomic uint64_t busy_ns; /* CLOCK_MONOTONIC of the last hotplug activity (any thread) */
	uint64_t spare_quiet_ns; /* CPUS_SPARE_QUIET_MS; main thread */
	enum cpus_run_state run_state; /* main thread */
	struct vcpu_gate gate; /* closed: every vCPU thread waits before KVM_RUN */
	bool gate_ready;
	struct acpi_cpu_hotplug block; /* at the machine's layout's cpuhp_base */
	unsigned block_gpe_bit; /* the block's event in GPE0: the layout's cpuhp_gpe_bit */
	struct direct_start start_port;
	struct hotplug_report report_port;
	struct hotplug_pv pv_port; /* the paravirt front end over `block` */
	int wake_fd; /* eventfd: work for cpus_process() */
	void (*event_fn)(void *opaque, const struct cpus_event *e);
	void *event_opaque;
};

#endif
