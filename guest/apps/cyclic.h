/* SPDX-License-Identifier: MIT */
/*
 * Wake-up latency measurement, modelled on rt-tests' cyclictest: one thread per selected
 * CPU sleeps on absolute high-resolution-timer deadlines and records, from the TSC, how late
 * it ran. Live statistics go to a shared area plugvm reads (common/plugvm_latency.h).
 */
#ifndef PLUGVM_APPS_CYCLIC_H
#define PLUGVM_APPS_CYCLIC_H

/*
 * With the `latency` word on the command line: register the shared area with plugvm (when
 * it offers PLUGVM_FEATURE_LATENCY), start the stress the command line asks for, and one
 * per-CPU measurement thread for each selected CPU (parked while its CPU is away). Init
 * thread, after the boot bring-up. Returns 0, or -errno after printing why (a bad value
 * stops the boot, as every command-line word's does).
 */
int cyclic_start(void);

#endif
