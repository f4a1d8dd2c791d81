/* SPDX-License-Identifier: MIT */
/*
 * The machine: builds a VM from its config (KVM, memory, devices, guest, boot vCPUs), runs
 * its main event loop, tears it down. main.c's three calls.
 */
#ifndef PLUGVM_VMM_MACHINE_H
#define PLUGVM_VMM_MACHINE_H

struct vm;
struct vm_config;

/*
 * Build the VM for `cfg`: KVM, memory, kernel, boot data, ACPI tables, devices and the
 * boot vCPUs. Returns 0, or an exit code from exitcode.h after logging why.
 */
int machine_create(struct vm *vm, const struct vm_config *cfg);

/*
 * Start the control socket and the boot vCPUs (or wait for QMP `cont` with -S), run the
 * main event loop until the VM stops, end every vCPU thread. Returns the exit status.
 */
int machine_run(struct vm *vm);

/* Release everything machine_create() built. Safe on a partly built VM. */
void machine_destroy(struct vm *vm);

#endif
