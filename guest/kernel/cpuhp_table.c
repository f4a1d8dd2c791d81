// SPDX-License-Identifier: MIT
/*
 * The CPU hotplug states and what each one does: bring-up runs the startups from the top,
 * tear-down the teardowns from the bottom (kernel/cpuhp_states.h orders the states,
 * docs/cpuhp.md explains them). Every callback is the subsystem's own `int fn(unsigned int
 * cpu)`, declared in its header. Data only: the guest links it with the subsystems; the
 * host unit test and the engine benchmark link this same file with fakes of the same
 * functions (tests/unit/cpuhp_fakes.c).
 *
 * .serialize marks steps that must not run on two CPUs at once during a parallel
 * bring-up: sched:active walks the global parked-thread list and calls every online CPU
 * (dynamic states are serialized too: the kernel does not know their code). Every other
 * step touches the arriving CPU's own data, or takes its own locks.
 */
#include "arch.h"
#include "kernel/cpuhp.h"
#include "kernel/sched.h"
#include "kernel/smp.h"
#include "kernel/timer.h"
#include "kernel/watchdog.h"

const struct cpuhp_step cpuhp_table[CPUHP_NR_STATES] = {
	[CPUHP_OFFLINE] = { .name = "offline" },
	/* PREPARE: on the control CPU */
	[CPUHP_PERCPU_PREPARE] = { .name = "percpu:prepare",
				   .startup = arch_cpu_prepare,
				   .teardown = arch_cpu_unprepare },
	[CPUHP_THREADS_PREPARE] = { .name = "threads:prepare", .startup = cpuhp_threads_prepare },
	[CPUHP_SCHED_PREPARE] = { .name = "sched:prepare",
				  .startup = sched_prepare_cpu,
				  .teardown = sched_dead_cpu },
	[CPUHP_TIMERS_PREPARE] = { .name = "timers:prepare",
				   .startup = timers_prepare_cpu,
				   .teardown = timers_dead_cpu },
	/* The engine kicks the CPU itself; the teardown waits for it to report itself dead. */
	[CPUHP_BRINGUP_CPU] = { .name = "cpu:bringup", .teardown = cpuhp_wait_dead },
	/* STARTING: on the arriving or dying CPU, interrupts off */
	[CPUHP_AP_OFFLINE] = { .name = "ap:offline" },
	[CPUHP_AP_ARCH_STARTING] = { .name = "arch:starting",
				     .startup = arch_cpu_starting,
				     .teardown = arch_cpu_dying },
	[CPUHP_AP_SCHED_STARTING] = { .name = "sched:starting",
				      .startup = sched_starting_cpu,
				      .teardown = sched_dying_cpu },
	[CPUHP_AP_TICK_STARTING] = { .name = "tick:starting",
				     .startup = tick_starting_cpu,
				     .teardown = tick_dying_cpu },
	[CPUHP_AP_ONLINE_MASK] = { .name = "cpu:online-mask",
				   .startup = smp_cpu_online,
				   .teardown = smp_cpu_offline },
	[CPUHP_AP_ONLINE] = { .name = "ap:online" },
	/* ONLINE: in the CPU's hotplug thread cpuhp/N */
	[CPUHP_AP_ONLINE_IDLE] = { .name = "ap:online-idle" },
	[CPUHP_AP_TIMERS_ONLINE] = { .name = "timers:online",
				     .startup = timers_online_cpu,
				     .teardown = timers_offline_cpu },
	[CPUHP_AP_WATCHDOG_ONLINE] = { .name = "watchdog:online",
				       .startup = watchdog_online_cpu,
				       .teardown = watchdog_offline_cpu },
	[CPUHP_AP_SCHED_ACTIVE] = { .name = "sched:active",
				    .startup = sched_activate_cpu,
				    .teardown = sched_deactivate_cpu,
				    .serialize = true },
	[CPUHP_ONLINE] = { .name = "online" },
};
