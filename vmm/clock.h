/* SPDX-License-Identifier: MIT */
/* The host's monotonic clock, as every VMM module reads it. */
#ifndef PLUGVM_VMM_CLOCK_H
#define PLUGVM_VMM_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in ns. */
static inline uint64_t clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
