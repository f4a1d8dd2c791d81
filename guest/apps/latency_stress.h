/* SPDX-License-Identifier: MIT */
/*
 * Loads for the latency measurement beside the agent's hogs and timer storm: a cross-CPU
 * wake-up (IPI) storm and local_lock contention on per-CPU data.
 */
#ifndef PLUGVM_APPS_LATENCY_STRESS_H
#define PLUGVM_APPS_LATENCY_STRESS_H

#define LATENCY_STRESS_IPI   (1u << 0)
#define LATENCY_STRESS_LOCKS (1u << 1)

/*
 * Start `kinds` (LATENCY_STRESS_*) on the CPUs online now, as per-CPU threads at priority
 * 20 that run until power-off. Init thread. Returns 0 or -ENOMEM (some may run).
 */
int latency_stress_start(unsigned kinds);

#endif
