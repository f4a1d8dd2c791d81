/* SPDX-License-Identifier: MIT */
/*
 * The control socket of a VM (--qmp): its QMP server and the commands it answers. The
 * protocol itself is in qmp.h; docs/qmp.md documents both.
 */
#ifndef PLUGVM_VMM_CONTROL_H
#define PLUGVM_VMM_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vm;

/* Listen on cfg->qmp_path if set (vm->qmp). Returns 0 or -errno (logged). */
int control_start(struct vm *vm);

/* Emit SHUTDOWN for exit `status`, deliver what is queued (bounded), close the socket. */
void control_stop(struct vm *vm, int status);

/* How long a guest has to complete a device_del before DEVICE_UNPLUG_GUEST_ERROR. */
#define CONTROL_UNPLUG_TIMEOUT_MS 10000

/*
 * Milliseconds until the next unplug deadline or rate-limited event's turn (-1: none), for
 * the main loop's wait.
 */
int control_next_timeout_ms(struct vm *vm);
/*
 * Report the removals the guest refused or did not finish in time; send waiting events.
 * Main thread.
 */
void control_check_timeouts(struct vm *vm);
/*
 * The guest answered a removal with a failure (_OST). Any thread (a vCPU's): it only marks
 * the request, and control_check_timeouts() on the main thread reports it, so that no
 * other thread reads the CPU's id while the main loop may free it. True when a pending
 * request was marked: the caller then wakes the main loop.
 */
bool control_unplug_failed(struct vm *vm, unsigned slot);

/*
 * The guest reports `slot` online (or offline) with `result` after `guest_ns`: emit
 * PLUGVM_CPU_ONLINE / PLUGVM_CPU_OFFLINE with the host-side time since the request.
 * Any thread.
 */
void control_cpu_report(struct vm *vm, unsigned slot, bool online, int32_t result,
			uint64_t guest_ns);

/* Free what the control socket kept about CPUs (after vm_run()). */
void control_free(struct vm *vm);

/* The QOM path of the CPU in `slot` (QEMU's: boot CPUs unattached, added ones peripheral). */
void control_cpu_path(const struct vm *vm, unsigned slot, char *buf, size_t len);

/* The CPU in `slot` was ejected and parked: forget its id. */
void control_cpu_gone(struct vm *vm, unsigned slot);

#endif
