/* SPDX-License-Identifier: MIT */
/*
 * The latency statistics port (common/plugvm_latency.h, PLUGVM_FEATURE_LATENCY): the guest
 * registers its shared area once; the main thread copies consistent, checked snapshots of
 * it whenever asked (QMP query-latency), without a guest round trip. A pure device.
 */
#ifndef PLUGVM_VMM_DEVICES_LATENCY_H
#define PLUGVM_VMM_DEVICES_LATENCY_H

#include <stdbool.h>
#include <stdint.h>

#include "plugvm_latency.h"

struct vm;

/* A copy of the area with every value checked; records that were never used stay zero. */
struct latency_snapshot {
	uint32_t interval_us, hist_us, threshold_us, nr_states, flags;
	uint64_t tsc_khz;
	uint64_t outlier_seq; /* outliers ever recorded */
	unsigned nr_outliers; /* the last ones, oldest first, in outliers[] */
	/* records whose writer kept moving (the last good copy instead, `stale`) and outlier
	 * slots caught mid-write (left out) */
	unsigned torn;
	bool stale[PLUGVM_LATENCY_MAX_CPUS]; /* cpus[k] is from an earlier read */
	struct plugvm_latency_outlier outliers[PLUGVM_LATENCY_OUTLIERS];
	struct plugvm_latency_state states[PLUGVM_LATENCY_MAX_STATES]; /* names NUL-ended */
	struct plugvm_latency_cpu cpus[PLUGVM_LATENCY_MAX_CPUS]; /* flags 0: not measured */
};

/* Copy attempts per record before its last good copy stands in; tests may lower it. */
#define LATENCY_COPY_TRIES 256
extern unsigned latency_copy_tries;

/* Put the port on vm->pio (vm->latency). Returns 0 or -errno (logged). */
int latency_init(struct vm *vm);
/* Free it (after the vCPU threads ended). */
void latency_exit(struct vm *vm);

/*
 * Copy the registered area into *s, checking every value (a bad one is clamped or its
 * record dropped, with a rate-limited warning). Main thread. Returns 0, -ENODATA if the
 * guest registered no area, -EFAULT if the area is no longer guest RAM.
 */
int latency_read(struct vm *vm, struct latency_snapshot *s);

#endif
