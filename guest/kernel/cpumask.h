/* SPDX-License-Identifier: MIT */
/* Fixed-size CPU bitmaps with atomic updates and lock-free reads. */
#ifndef PLUGVM_KERNEL_CPUMASK_H
#define PLUGVM_KERNEL_CPUMASK_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/compiler.h"
#include "plugvm_abi.h"

#define NR_CPUS	      PLUGVM_MAX_CPUS
#define CPUMASK_WORDS ((NR_CPUS + 63) / 64)

struct cpumask {
	uint64_t bits[CPUMASK_WORDS];
};

static inline void cpumask_set(struct cpumask *m, unsigned cpu)
{
	__atomic_fetch_or(&m->bits[cpu / 64], 1ull << (cpu % 64), __ATOMIC_SEQ_CST);
}

static inline void cpumask_clear(struct cpumask *m, unsigned cpu)
{
	__atomic_fetch_and(&m->bits[cpu / 64], ~(1ull << (cpu % 64)), __ATOMIC_SEQ_CST);
}

static inline bool cpumask_test(const struct cpumask *m, unsigned cpu)
{
	return cpu < NR_CPUS &&
	       (__atomic_load_n(&m->bits[cpu / 64], __ATOMIC_ACQUIRE) >> (cpu % 64)) & 1;
}

static inline unsigned cpumask_weight(const struct cpumask *m)
{
	unsigned i, n = 0;

	for (i = 0; i < CPUMASK_WORDS; i++)
		n += popcount64(__atomic_load_n(&m->bits[i], __ATOMIC_RELAXED));
	return n;
}

/* First set CPU at or after `cpu`, or NR_CPUS. */
static inline unsigned cpumask_next(const struct cpumask *m, unsigned cpu)
{
	while (cpu < NR_CPUS) {
		uint64_t w = __atomic_load_n(&m->bits[cpu / 64], __ATOMIC_RELAXED) >> (cpu % 64);

		if (w)
			return cpu + (unsigned)__builtin_ctzll(w);
		cpu = (cpu / 64 + 1) * 64;
	}
	return NR_CPUS;
}

#define for_each_cpu(cpu, mask)                                \
	for ((cpu) = cpumask_next((mask), 0); (cpu) < NR_CPUS; \
	     (cpu) = cpumask_next((mask), (cpu) + 1))

#endif
