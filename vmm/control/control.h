/* SPDX-License-Identifier: MIT */
/*
 * The control socket of a VM (--qmp): its QMP server and the commands it answers. The
 * protocol itself is in qmp.h; docs/qmp.md documents both.
 */
#ifndef PLUGVM_VMM_CONTROL_H
#define PLUGVM_VMM_CONTROL_H

#include <stdbool.h>

struct vm;

/*
 * Listen on cfg->qmp_path if set (vm->qmp), and hear the vCPU lifecycle's events (with a
 * machine: vm_has_machine()). Without a machine only the commands marked QMP_CMD_NO_MACHINE
 * run. Before any vCPU runs and before the sandbox: it looks at /dev/kvm for query-kvm
 * (control_probe_init()). Returns 0 or -errno (logged).
 */
int control_start(struct vm *vm);

/* Emit SHUTDOWN for exit `status`, deliver what is queued (bounded), close the socket. */
void control_stop(struct vm *vm, int status);

/* Milliseconds until a rate-limited event's turn (-1: none), for the main loop's wait. */
int control_next_timeout_ms(struct vm *vm);
/* Send the rate-limited events whose turn came. Main thread. */
void control_tick(struct vm *vm);

/* Readable when the control socket has work (-1: no socket): call control_dispatch(). */
int control_fd(const struct vm *vm);
/* Accept clients, run their commands, send replies and events. Main thread. */
void control_dispatch(struct vm *vm);

/* The machine was reset (QMP system_reset, or the guest's with `guest`): RESET. Main thread. */
void control_reset_done(struct vm *vm, bool guest);
/*
 * The guest powered off (or, with `reset`, reset under reboot=shutdown) and the VM stays:
 * SHUTDOWN {"guest": true, "reason": "guest-shutdown" or "guest-reset"}. Main thread.
 */
void control_guest_shutdown(struct vm *vm, bool reset);
/* The vCPUs stopped (after control_guest_shutdown()): STOP. Main thread. */
void control_stopped(struct vm *vm);

/* Free what the control socket kept (after machine_run()). */
void control_free(struct vm *vm);

#endif
