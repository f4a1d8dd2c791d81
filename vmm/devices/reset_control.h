/* SPDX-License-Identifier: MIT */
/*
 * The reset control register (port 0xcf9) of QEMU's pc and q35 chipsets: how a guest asks
 * for a reset.
 */
#ifndef PLUGVM_VMM_DEVICES_RESET_CONTROL_H
#define PLUGVM_VMM_DEVICES_RESET_CONTROL_H

#define RESET_CONTROL_PORT 0xcf9

struct vm;

/*
 * Register the port on vm->pio: a write with bit 2 set calls vm_guest_reset(); bit 1 reads
 * back. Returns 0 or -errno (logged).
 */
int reset_control_init(struct vm *vm);
/* Back to power-on state (system_reset): bit 1 clear. */
void reset_control_reset(void);

#endif
