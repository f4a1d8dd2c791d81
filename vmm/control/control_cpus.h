/* SPDX-License-Identifier: MIT */
/*
 * The control socket's CPU commands (control_cpus.c): query-cpus-fast,
 * query-hotpluggable-cpus, device_add, device_del; and the vCPU lifecycle's events as QMP
 * events. control.c merges the commands into its table. docs/qmp.md has the shapes.
 */
#ifndef PLUGVM_VMM_CONTROL_CPUS_H
#define PLUGVM_VMM_CONTROL_CPUS_H

#include <stddef.h>

#include "../cpus.h"
#include "qmp.h"

struct vm;

/* The type of plugvm's vCPU, QEMU's <model>-x86_64-cpu: plugvm passes the host's model. */
#define CONTROL_CPU_TYPE "host-x86_64-cpu"

/* Ends with name == NULL; ctx is the struct vm. */
extern const struct qmp_command control_cpus_commands[];

/*
 * A lifecycle event as QMP (cpus_set_event_fn, opaque is the struct vm). OST and REPORT come
 * from vCPU threads, at the guest's pace: rate-limited per slot.
 */
void control_cpus_event(void *opaque, const struct cpus_event *e);

/* The QOM path of the CPU in `slot`, as query-cpus-fast shows it. Main thread. */
void control_cpu_path(struct vm *vm, unsigned slot, char *buf, size_t len);

#endif
