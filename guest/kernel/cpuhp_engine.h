/* SPDX-License-Identifier: MIT */
/*
 * The CPU hotplug state engine: walks one CPU's state up or down a table of steps, records
 * per-state timings, injects failures and rolls back. Pure (no architecture, no scheduler):
 * the guest plugs in its contexts through struct cpuhp_ops; host unit tests plug in fakes.
 *
 * Who runs what:
 *  - cpuhp_engine_set_target()/cpuhp_engine_bringup() run on the control side and run PREPARE steps
 *    themselves. Above CPUHP_BRINGUP_CPU they hand the walk to the CPU: ops->kick() starts
 *    it, ops->wait_up() waits for it; ops->ap_walk() has its hotplug thread walk.
 *  - The arriving CPU calls cpuhp_ap_starting() (interrupts off), then its hotplug thread
 *    calls cpuhp_ap_walk_online(); going down, the thread calls cpuhp_ap_walk_online() and
 *    then, interrupts off, cpuhp_ap_dying().
 * A step that fails leaves the state just below it; the control side then walks back to
 * where the transition started (failure injection off), so the CPU ends where it began.
 * Callers serialize transitions of one CPU (the guest holds its hotplug mutex).
 */
#ifndef PLUGVM_KERNEL_CPUHP_ENGINE_H
#define PLUGVM_KERNEL_CPUHP_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/cpuhp_states.h"
#include "kernel/errno.h"

typedef int (*cpuhp_cb)(unsigned cpu);

struct cpuhp_step {
	const char *name; /* NULL: a free dynamic slot */
	cpuhp_cb startup; /* may be NULL */
	cpuhp_cb teardown; /* may be NULL */
	bool serialize; /* touches shared data: never on two CPUs at once */
};

struct cpuhp_cpu {
	volatile int state; /* current state, written by whichever context walks */
	int target; /* where the running transition goes */
	int fail; /* inject a failure at this state's next callback, or -1 */
	bool rollback; /* walking back after a failure: no injection, no new failures */
	int error; /* of the last transition: 0 or a negative errno */
	int failed_state; /* where it failed, or -1 */
	int start; /* where the running transition started (rollback goes back there) */
	bool pending; /* kicked by a parallel bring-up, not yet waited for */
	/* For observers on other CPUs (latency attribution), atomic stores and racy reads: the
	 * callback in progress (state + 1, with CPUHP_RUNNING_DOWN for a teardown; 0: none), the
	 * last one started (same encoding) and how many were started. */
	unsigned running, last, started;
	uint64_t up_ns[CPUHP_NR_STATES]; /* last startup duration per state */
	uint64_t down_ns[CPUHP_NR_STATES]; /* last teardown duration per state */
};

#define CPUHP_RUNNING_DOWN 0x8000u

struct cpuhp_engine;

struct cpuhp_ops {
	uint64_t (*now_ns)(void);
	/* Start the CPU (state CPUHP_BRINGUP_CPU - 1); it walks to cpus[cpu].target by itself. */
	int (*kick)(struct cpuhp_engine *e, unsigned cpu);
	/* Wait until the kicked CPU finished walking (or died failing). 0 or -errno. */
	int (*wait_up)(struct cpuhp_engine *e, unsigned cpu);
	/* Have the CPU's hotplug thread walk to .target (down through STARTING to death if
	 * the target is below CPUHP_AP_ONLINE) and wait for it. 0 or -errno. */
	int (*ap_walk)(struct cpuhp_engine *e, unsigned cpu);
	/* Run one callback of an ONLINE state on the CPU's hotplug thread and wait. */
	int (*ap_invoke)(struct cpuhp_engine *e, unsigned cpu, int state, bool up);
	/* Around steps marked serialize (STARTING: interrupts are off). May be NULL. */
	void (*serial_lock)(enum cpuhp_section s);
	void (*serial_unlock)(enum cpuhp_section s);
	/* Every callback run, with its duration and result. May be NULL. */
	void (*trace)(unsigned cpu, int state, bool up, uint64_t ns, int ret);
};

struct cpuhp_engine {
	struct cpuhp_step steps[CPUHP_NR_STATES];
	const struct cpuhp_ops *ops;
	struct cpuhp_cpu *cpus;
	unsigned nr_cpus;
	void *priv;
};

void cpuhp_engine_init(struct cpuhp_engine *e, const struct cpuhp_step *steps,
		       const struct cpuhp_ops *ops, struct cpuhp_cpu *cpus, unsigned nr_cpus);

const char *cpuhp_state_name(const struct cpuhp_engine *e, int state);
/* State id of `name`, or -1. */
int cpuhp_state_by_name(const struct cpuhp_engine *e, const char *name);
/* May a CPU be sent to `state`? (named, not atomic) */
bool cpuhp_valid_target(const struct cpuhp_engine *e, int state);

/* Control side: move `cpu` to `target`; on failure it is back where it started. */
int cpuhp_engine_set_target(struct cpuhp_engine *e, unsigned cpu, int target);
/*
 * Control side: bring up several CPUs to `target`. Parallel: every CPU's PREPARE steps,
 * then kick them all, then wait for each. Serial: one CPU after the other. A CPU that fails
 * is rolled back alone. Returns how many CPUs reached `target`.
 */
unsigned cpuhp_engine_bringup(struct cpuhp_engine *e, const unsigned *cpus, unsigned n, int target,
			      bool parallel);
/* Fail the next callback of `state` for `cpu` (-1 clears). Only states with callbacks. */
int cpuhp_engine_inject_fail(struct cpuhp_engine *e, unsigned cpu, int state);

/* The arriving CPU, interrupts off: STARTING steps up to CPUHP_AP_ONLINE. On failure they
 * are undone, the state is CPUHP_BRINGUP_CPU - 1 and the CPU must report itself dead. */
int cpuhp_ap_starting(struct cpuhp_engine *e, unsigned cpu);
/* The hotplug thread: ONLINE steps towards .target, no lower than CPUHP_AP_ONLINE. */
int cpuhp_ap_walk_online(struct cpuhp_engine *e, unsigned cpu);
/* The dying CPU, interrupts off, from CPUHP_AP_ONLINE: STARTING teardowns (they cannot
 * fail) down to CPUHP_AP_OFFLINE. */
void cpuhp_ap_dying(struct cpuhp_engine *e, unsigned cpu);
/* One callback in the current context, with injection and timing. */
int cpuhp_invoke(struct cpuhp_engine *e, unsigned cpu, int state, bool up);

/*
 * Dynamic states, like Linux's cpuhp_setup_state(): take a free slot of `section`
 * (PREPARE or ONLINE) and, if `invoke`, run startup on every CPU already past the slot
 * (undone on failure). Returns the state id or -errno. Dynamic states are serialized.
 */
int cpuhp_engine_setup_state(struct cpuhp_engine *e, enum cpuhp_section section, const char *name,
			     cpuhp_cb startup, cpuhp_cb teardown, bool invoke);
int cpuhp_engine_remove_state(struct cpuhp_engine *e, int state, bool invoke);

#endif
