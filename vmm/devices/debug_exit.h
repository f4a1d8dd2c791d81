/* SPDX-License-Identifier: MIT */
/*
 * QEMU's isa-debug-exit device at 0xf4: the guest's status on the way out.
 */
#ifndef PLUGVM_VMM_DEVICES_DEBUG_EXIT_H
#define PLUGVM_VMM_DEVICES_DEBUG_EXIT_H

struct vm;

/* QEMU's isa-debug-exit at 0xf4: a write of v stops the VM with status (v << 1) | 1. */
int debug_exit_init(struct vm *vm);

#endif
