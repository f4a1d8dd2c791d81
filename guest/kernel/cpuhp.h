/* SPDX-License-Identifier: MIT */
/*
 * CPU hotplug: every secondary CPU arrives and leaves through one table of states
 * (kernel/cpuhp_states.h lists them), walked by the engine (kernel/cpuhp_engine.c).
 * PREPARE steps run on the control side, STARTING steps on the CPU itself with interrupts
 * off, ONLINE steps in the CPU's own hotplug thread "cpuhp/N". The boot CPU is online from
 * the start and cannot go down.
 *
 * All calls below are thread context and serialized by one hotplug mutex; they return 0 or
 * a negative errno.
 */
#ifndef PLUGVM_KERNEL_CPUHP_H
#define PLUGVM_KERNEL_CPUHP_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/compiler.h"
#include "kernel/cpuhp_engine.h"

struct cpuhp_state_info {
	int id;
	const char *name;
	enum cpuhp_section section;
	bool can_rest; /* a valid target */
	bool can_fail; /* cpuhp_fail() accepts it (it has callbacks, or is the kick) */
	bool serialize;
};

/* The guest's states: what each one does (kernel/cpuhp_table.c). */
extern const struct cpuhp_step cpuhp_table[CPUHP_NR_STATES];

/* threads:prepare: create cpuhp/N (once: it is parked while the CPU is away). 0 or -ENOMEM. */
int cpuhp_threads_prepare(unsigned int cpu);
/* cpu:bringup teardown: wait (10 s) until the dying CPU reported itself dead. 0 or
 * -ETIMEDOUT; either way its start-up resources are released. */
int cpuhp_wait_dead(unsigned int cpu);

/* Boot CPU, once, before threads run: the engine, cpuhp/0, the trampoline. */
void cpuhp_init(void);
/* Init thread: bring up every present secondary CPU (parallel unless cpuhp.parallel=0). */
void cpuhp_boot_secondaries(void);

/* Move `cpu` (not 0) to `target`; on failure it is back where it was. */
int cpuhp_set_target(unsigned cpu, int target);
static inline int cpu_up(unsigned cpu)
{
	return cpuhp_set_target(cpu, CPUHP_ONLINE);
}
static inline int cpu_down(unsigned cpu)
{
	return cpuhp_set_target(cpu, CPUHP_OFFLINE);
}
/* Bring the CPUs in `cpus` to `target` together (parallel) or one by one. Returns how many
 * got there; *ns (if not NULL) gets the wall time it took. */
unsigned cpuhp_bringup_cpus(const unsigned *cpus, unsigned n, int target, bool parallel,
			    uint64_t *ns);
/* Fail the next callback of `state` on `cpu` (-1 clears). */
int cpuhp_fail(unsigned cpu, int state);

int cpuhp_state(unsigned cpu); /* current state of `cpu`, or -EINVAL */
int cpuhp_target(unsigned cpu);
/* What `cpu`'s hotplug callbacks are doing, for observers (encodings in cpuhp_engine.h). */
struct cpuhp_activity {
	unsigned running; /* state + 1 (| CPUHP_RUNNING_DOWN) of the callback in progress, or 0 */
	unsigned last; /* the same of the last callback started, or 0 */
	unsigned started; /* callbacks started so far */
};
/* Fill *a for `cpu` (all 0 when out of range). Any context; a racy snapshot. */
void cpuhp_activity(unsigned cpu, struct cpuhp_activity *a);
int cpuhp_last_error(unsigned cpu, int *failed_state);
/* The state armed by cpuhp_fail() for `cpu`'s next transition, or -1. */
int cpuhp_fail_state(unsigned cpu);
/* Last startup (up) / teardown duration of `state` on `cpu`, in ns. */
uint64_t cpuhp_state_ns(unsigned cpu, int state, bool up);
int cpuhp_state_id(const char *name); /* or -1 */
const char *cpuhp_name(int state); /* NULL for a free dynamic slot */
/* Describe state `id` (0..CPUHP_NR_STATES-1); false for a free dynamic slot. */
bool cpuhp_state_info(int id, struct cpuhp_state_info *info);

/* Dynamic states (Linux's cpuhp_setup_state()): PREPARE or ONLINE section. Returns the id. */
int cpuhp_setup_state(enum cpuhp_section section, const char *name, cpuhp_cb startup,
		      cpuhp_cb teardown, bool invoke_on_online);
int cpuhp_remove_state(int state, bool invoke);

/* Called for every callback run (any CPU, any context, maybe interrupts off). */
typedef void (*cpuhp_trace_fn)(unsigned cpu, int state, bool up, uint64_t ns, int ret);
void cpuhp_set_trace(cpuhp_trace_fn fn);

/* Arch entry of an arriving CPU (its struct cpu reachable, interrupts off). */
__noreturn void cpuhp_ap_entry(unsigned cpu);
/* The idle loop of a CPU whose hotplug thread tore it down: report death, halt. */
__noreturn void cpuhp_idle_dead(void);

#endif
