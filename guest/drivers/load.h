/* SPDX-License-Identifier: MIT */
/*
 * plugvm's load port (PLUGVM_FEATURE_LOAD, common/plugvm_load.h): the array of per-CPU load
 * latches the scheduler writes (kernel/sched_load.h), registered with plugvm, which reads
 * it to add and remove vCPUs as the load asks.
 */
#ifndef PLUGVM_DRIVERS_LOAD_H
#define PLUGVM_DRIVERS_LOAD_H

#include <stdint.h>

#include "plugvm_load.h"

/*
 * Boot, before the secondary CPUs come up: if plugvm offers the port, allocate one latch
 * per possible APIC ID (64-byte aligned, contiguous), hand it to the scheduler and register
 * it; one console line if plugvm refuses (its status). Init thread.
 */
void load_start(void);
/*
 * Register the kernel's area again (after a test registered its own, or withdrew it).
 * Returns plugvm's status; UINT32_MAX when there is no area (no port, or no memory).
 * Thread context; one caller at a time.
 */
uint32_t load_register_again(void);
/*
 * Send one registration (its guest-physical address, one 32-bit OUT; `status` is set to 0
 * first, as plugvm requires); returns plugvm's status. Only with PLUGVM_FEATURE_LOAD.
 */
uint32_t load_send(struct plugvm_load_register *reg);

#endif
