/* SPDX-License-Identifier: MIT */
/* The architecture-independent boot sequence. */
#ifndef PLUGVM_KERNEL_MAIN_H
#define PLUGVM_KERNEL_MAIN_H

#include "kernel/compiler.h"

/* Called by the arch layer on the boot CPU once memory, ACPI, console and time work. */
__noreturn void kernel_main(void);

/*
 * A word whose value its reader found bad (`name=value`, `why`): say so as the boot check
 * does and stop the boot (exit status 7 on plugvm). Any CPU, during boot.
 */
__noreturn void boot_stop_bad_word(const char *name, const char *value, size_t len,
				   const char *why);

#endif
