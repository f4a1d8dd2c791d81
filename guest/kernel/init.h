/* SPDX-License-Identifier: MIT */
/*
 * The entry into the boot sequence, guest/init/main.c (Linux's start_kernel()): the arch
 * layer calls it; nothing in kernel/ depends on what init/ calls.
 */
#ifndef PLUGVM_KERNEL_INIT_H
#define PLUGVM_KERNEL_INIT_H

#include "kernel/compiler.h"

/* Called by the arch layer on the boot CPU once memory, ACPI, console and time work. */
__noreturn void kernel_main(void);

#endif
