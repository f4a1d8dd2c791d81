/* SPDX-License-Identifier: MIT */
/* Panic: one CPU reports, the others are stopped, the machine powers off with a failure. */
#ifndef PLUGVM_KERNEL_PANIC_H
#define PLUGVM_KERNEL_PANIC_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel/compiler.h"

/* Guest power-off statuses (plugvm/QEMU exit status = (status << 1) | 1). */
#define GUEST_EXIT_SELFTEST_FAILED 1
#define GUEST_EXIT_PANIC	   2
#define GUEST_EXIT_BAD_CMDLINE	   3

/*
 * Claim the panic. Returns true for the first CPU; any later caller (another CPU, or a
 * recursive panic) is halted here and never returns.
 */
bool panic_enter(void);
/* Stop the other CPUs and power off with GUEST_EXIT_PANIC. */
__noreturn void panic_finish(void);
/* True once some CPU panicked (NMI handlers use it to stop). */
bool panic_in_progress(void);

/*
 * A bad value on the command line stops the boot with GUEST_EXIT_BAD_CMDLINE (exit status 7
 * on plugvm) after one line that says so. boot_stop_bad_cmdline: the words were reported
 * already. boot_stop_bad_word: report `name=value` and `why` first, as the boot's check
 * does. Any CPU, during boot.
 */
__noreturn void boot_stop_bad_cmdline(void);
__noreturn void boot_stop_bad_word(const char *name, const char *value, size_t len,
				   const char *why);

#endif
