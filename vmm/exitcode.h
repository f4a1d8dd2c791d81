/* SPDX-License-Identifier: MIT */
/*
 * The VMM's exit status table, the one place that gives meaning to plugvm's exit codes.
 * Odd statuses belong to the guest: QEMU's isa-debug-exit encoding, (value << 1) | 1.
 */
#ifndef PLUGVM_VMM_EXITCODE_H
#define PLUGVM_VMM_EXITCODE_H

enum plugvm_exit {
	PLUGVM_EXIT_OK = 0, /* guest powered off (ACPI S5) or `quit` */
	PLUGVM_EXIT_USAGE = 2, /* bad command line or configuration file */
	PLUGVM_EXIT_SETUP = 4, /* host or KVM failure while building the VM */
	PLUGVM_EXIT_GUEST_CRASH = 6, /* triple fault, KVM internal error, failed entry */
	PLUGVM_EXIT_INTERNAL = 8, /* the VMM failed while the VM ran */
	PLUGVM_EXIT_SIGNAL_BASE = 128, /* ended by signal N: 128 + N */
};

#endif
