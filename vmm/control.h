/* SPDX-License-Identifier: MIT */
/*
 * The control socket of a VM (--qmp): its QMP server and the commands it answers. The
 * protocol itself is in qmp.h; docs/qmp.md documents both.
 */
#ifndef PLUGVM_VMM_CONTROL_H
#define PLUGVM_VMM_CONTROL_H

struct vm;

/* Listen on cfg->qmp_path if set (vm->qmp). Returns 0 or -errno (logged). */
int control_start(struct vm *vm);

/* Emit SHUTDOWN for exit `status`, deliver what is queued (bounded), close the socket. */
void control_stop(struct vm *vm, int status);

#endif
