/* SPDX-License-Identifier: MIT */
/*
 * The bursty workload of the vCPU autoscaling benchmark (`bursts=N`): N bursts of K work
 * items shared by T unpinned worker threads, with idle time between them; each burst's
 * completion time and the CPUs online, and at the end the median and worst burst and the
 * integral of online CPUs over the run (vcpu_ms).
 */
#ifndef PLUGVM_APPS_BURSTS_H
#define PLUGVM_APPS_BURSTS_H

/*
 * With `bursts=N` on the command line: run the N bursts (bursts.threads, .items, .work,
 * .idle_ms, .start_ms) and print the `bursts:` lines, then return. Init thread. Returns 0
 * (also without the word), or -ENOMEM.
 */
int bursts_run(void);

#endif
