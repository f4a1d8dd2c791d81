/* SPDX-License-Identifier: MIT */
/*
 * Background workloads the agent channel starts and stops (PLUGVM_AGENT_WORKLOAD_*): CPU
 * hogs that sleep between bursts and/or a timer storm of mostly cancelled timeouts, in
 * unbound threads (the scheduler spreads them over the active CPUs and moves them off a
 * CPU going down, so they survive hotplug). One workload at a time.
 */
#ifndef PLUGVM_APPS_WORKLOAD_H
#define PLUGVM_APPS_WORKLOAD_H

#include <stdint.h>

#include "plugvm_agent.h"

/* Once, before the first workload_start(). Thread context or boot. */
void workload_init(void);

/*
 * Start `w` (kind: PLUGVM_AGENT_WORK_* bits; threads 1..64; period_us 0 = 1000, at most
 * 1 s). Thread context. Returns 0 and its id in *id; -EBUSY if one is running; -EINVAL for
 * a bad argument; -ENOMEM.
 */
int workload_start(const struct plugvm_agent_workload *w, uint32_t *id);
/*
 * Stop workload `id`: its threads are joined and its timers cancelled (waiting for running
 * callbacks), then *r gets the counters. Thread context. 0, or -EINVAL if `id` is not running.
 */
int workload_stop(uint32_t id, struct plugvm_agent_workload_result *r);

#endif
