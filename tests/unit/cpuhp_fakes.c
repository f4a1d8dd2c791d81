// SPDX-License-Identifier: MIT
/*
 * Host stand-ins for every function guest/kernel/cpuhp_table.c names, so that host programs
 * (test_cpuhp, bench/cpuhp/bench_engine) link the guest's own table. Each fake finds its
 * state and direction in that table by its own address and calls cpuhp_fake(), which the
 * program defines (the unit test logs the call); built with -DCPUHP_FAKES_NOP (the engine
 * benchmark) each fake just returns 0. A callback the table gains and this list lacks is a
 * link error naming it; the states and their order always come from the table.
 */
#include "tests/unit/cpuhp_fakes.h"

#include <stdio.h>
#include <stdlib.h>

#include "arch.h"
#include "kernel/cpuhp.h"
#include "kernel/sched.h"
#include "kernel/smp.h"
#include "kernel/timer.h"
#include "kernel/watchdog.h"

#ifdef CPUHP_FAKES_NOP
/* The engine benchmark counts the walking alone: each fake just returns. */
#define FAKE(fn)                 \
	int fn(unsigned int cpu) \
	{                        \
		(void)cpu;       \
		return 0;        \
	}
#else
static int fake(cpuhp_cb self, unsigned int cpu)
{
	int s;

	for (s = 0; s < CPUHP_NR_STATES; s++) {
		if (cpuhp_table[s].startup == self)
			return cpuhp_fake(cpu, s, true);
		if (cpuhp_table[s].teardown == self)
			return cpuhp_fake(cpu, s, false);
	}
	fprintf(stderr, "cpuhp_fakes: a callback the table does not name ran\n");
	abort();
}

#define FAKE(fn)                      \
	int fn(unsigned int cpu)      \
	{                             \
		return fake(fn, cpu); \
	}
#endif

FAKE(arch_cpu_prepare)
FAKE(arch_cpu_unprepare)
FAKE(cpuhp_threads_prepare)
FAKE(sched_prepare_cpu)
FAKE(sched_dead_cpu)
FAKE(timers_prepare_cpu)
FAKE(timers_dead_cpu)
FAKE(cpuhp_wait_dead)
FAKE(arch_cpu_starting)
FAKE(arch_cpu_dying)
FAKE(sched_starting_cpu)
FAKE(sched_dying_cpu)
FAKE(tick_starting_cpu)
FAKE(tick_dying_cpu)
FAKE(smp_cpu_online)
FAKE(smp_cpu_offline)
FAKE(timers_online_cpu)
FAKE(timers_offline_cpu)
FAKE(watchdog_online_cpu)
FAKE(watchdog_offline_cpu)
FAKE(sched_activate_cpu)
FAKE(sched_deactivate_cpu)
