/* SPDX-License-Identifier: MIT */
/* The architecture-independent boot sequence. */
#ifndef PLUGVM_KERNEL_MAIN_H
#define PLUGVM_KERNEL_MAIN_H

#include "kernel/compiler.h"

/* Called by the arch layer on the boot CPU once memory, ACPI, console and time work. */
__noreturn void kernel_main(void);

#endif
