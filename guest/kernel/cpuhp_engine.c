// SPDX-License-Identifier: MIT
/*
 * The CPU hotplug state engine. Pure: compiled into the guest and into host unit tests.
 * See cpuhp_engine.h for who calls what; kernel/cpuhp_table.c holds the guest's table.
 */
#include "kernel/cpuhp_engine.h"

#include "kernel/compiler.h"

static bool streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

void cpuhp_engine_init(struct cpuhp_engine *e, const struct cpuhp_step *steps,
		       const struct cpuhp_ops *ops, struct cpuhp_cpu *cpus, unsigned nr_cpus)
{
	unsigned i, s;

	for (s = 0; s < CPUHP_NR_STATES; s++)
		e->steps[s] = steps[s];
	e->ops = ops;
	e->cpus = cpus;
	e->nr_cpus = nr_cpus;
	for (i = 0; i < nr_cpus; i++) {
		cpus[i].state = CPUHP_OFFLINE;
		cpus[i].target = CPUHP_OFFLINE;
		cpus[i].fail = -1;
		cpus[i].rollback = false;
		cpus[i].error = 0;
		cpus[i].failed_state = -1;
		cpus[i].start = CPUHP_OFFLINE;
		cpus[i].pending = false;
		for (s = 0; s < CPUHP_NR_STATES; s++)
			cpus[i].up_ns[s] = cpus[i].down_ns[s] = 0;
	}
}

const char *cpuhp_state_name(const struct cpuhp_engine *e, int state)
{
	if (state < 0 || state >= CPUHP_NR_STATES)
		return NULL;
	return e->steps[state].name;
}

int cpuhp_state_by_name(const struct cpuhp_engine *e, const char *name)
{
	int s;

	for (s = 0; s < CPUHP_NR_STATES; s++)
		if (e->steps[s].name && streq(e->steps[s].name, name))
			return s;
	return -1;
}

bool cpuhp_valid_target(const struct cpuhp_engine *e, int state)
{
	return state >= 0 && state < CPUHP_NR_STATES && e->steps[state].name &&
	       !cpuhp_state_atomic(state);
}

static bool has_callbacks(const struct cpuhp_engine *e, int state)
{
	return e->steps[state].startup || e->steps[state].teardown;
}

int cpuhp_engine_inject_fail(struct cpuhp_engine *e, unsigned cpu, int state)
{
	if (cpu >= e->nr_cpus)
		return -EINVAL;
	if (state == -1) {
		e->cpus[cpu].fail = -1;
		return 0;
	}
	/* Like Linux: only a state that does something can fail (and the bring-up kick). */
	if (state <= CPUHP_OFFLINE || state >= CPUHP_ONLINE ||
	    (!has_callbacks(e, state) && state != CPUHP_BRINGUP_CPU))
		return -EINVAL;
	e->cpus[cpu].fail = state;
	return 0;
}

/* STARTING tear-downs run on a dying CPU that cannot turn back; nor can the kick's. */
static bool can_fail(int state, bool up)
{
	return up ||
	       (cpuhp_section_of(state) != CPUHP_SECTION_STARTING && state != CPUHP_BRINGUP_CPU);
}

int cpuhp_invoke(struct cpuhp_engine *e, unsigned cpu, int state, bool up)
{
	const struct cpuhp_step *step = &e->steps[state];
	struct cpuhp_cpu *c = &e->cpus[cpu];
	cpuhp_cb fn = up ? step->startup : step->teardown;
	bool inject = c->fail == state && !c->rollback && can_fail(state, up);
	uint64_t t0, dt;
	int ret = 0;

	if (!fn && !inject) { /* an empty step costs nothing and leaves no trace */
		if (up)
			c->up_ns[state] = 0;
		else
			c->down_ns[state] = 0;
		return 0;
	}
	t0 = e->ops->now_ns();
	{
		unsigned r = (unsigned)(state + 1) | (up ? 0 : CPUHP_RUNNING_DOWN);

		__atomic_store_n(&c->last, r, __ATOMIC_RELAXED);
		__atomic_store_n(&c->running, r, __ATOMIC_RELAXED);
		__atomic_store_n(&c->started, c->started + 1, __ATOMIC_RELEASE);
	}
	if (inject) {
		c->fail = -1;
		ret = -EIO;
	} else if (fn) {
		bool ser = step->serialize && e->ops->serial_lock;
		enum cpuhp_section sec = cpuhp_section_of(state);

		if (ser)
			e->ops->serial_lock(sec);
		ret = fn(cpu);
		if (ser)
			e->ops->serial_unlock(sec);
		if (ret > 0)
			ret = -ret;
	}
	__atomic_store_n(&c->running, 0, __ATOMIC_RELEASE);
	dt = e->ops->now_ns() - t0;
	if (up)
		c->up_ns[state] = dt;
	else
		c->down_ns[state] = dt;
	if (e->ops->trace)
		e->ops->trace(cpu, state, up, dt, ret);
	if (ret && (!can_fail(state, up) || c->rollback))
		ret = 0; /* nothing can undo it: the engine goes on (the trace saw it) */
	return ret;
}

/* Walk up in the current context, stopping below a failed step. */
static int walk_local_up(struct cpuhp_engine *e, unsigned cpu, int limit)
{
	struct cpuhp_cpu *c = &e->cpus[cpu];

	while (c->state < limit) {
		int next = c->state + 1, ret = cpuhp_invoke(e, cpu, next, true);

		if (ret) {
			c->failed_state = next;
			return ret;
		}
		c->state = next;
	}
	return 0;
}

static int walk_local_down(struct cpuhp_engine *e, unsigned cpu, int limit)
{
	struct cpuhp_cpu *c = &e->cpus[cpu];

	while (c->state > limit) {
		int ret = cpuhp_invoke(e, cpu, c->state, false);

		if (ret) {
			c->failed_state = c->state;
			return ret;
		}
		c->state = c->state - 1;
	}
	return 0;
}

/* The bring-up step's startup: injection, then the kick. The CPU walks on by itself. */
static int kick(struct cpuhp_engine *e, unsigned cpu)
{
	struct cpuhp_cpu *c = &e->cpus[cpu];
	uint64_t t0 = e->ops->now_ns();
	int ret;

	if (c->fail == CPUHP_BRINGUP_CPU && !c->rollback) {
		c->fail = -1;
		ret = -EIO;
	} else {
		ret = e->ops->kick(e, cpu);
	}
	c->up_ns[CPUHP_BRINGUP_CPU] = e->ops->now_ns() - t0;
	if (e->ops->trace)
		e->ops->trace(cpu, CPUHP_BRINGUP_CPU, true, c->up_ns[CPUHP_BRINGUP_CPU], ret);
	if (ret)
		c->failed_state = CPUHP_BRINGUP_CPU;
	return ret;
}

static int up(struct cpuhp_engine *e, unsigned cpu, int target)
{
	struct cpuhp_cpu *c = &e->cpus[cpu];
	int ret;

	if (c->state < CPUHP_BRINGUP_CPU - 1) {
		ret = walk_local_up(e, cpu, MIN(target, CPUHP_BRINGUP_CPU - 1));
		if (ret || c->state >= target)
			return ret;
	}
	if (c->state == CPUHP_BRINGUP_CPU - 1) {
		ret = kick(e, cpu);
		return ret ? ret : e->ops->wait_up(e, cpu);
	}
	return e->ops->ap_walk(e, cpu); /* running: its hotplug thread walks */
}

static int down(struct cpuhp_engine *e, unsigned cpu, int target)
{
	struct cpuhp_cpu *c = &e->cpus[cpu];
	int ret;

	if (c->state > CPUHP_AP_ONLINE) {
		ret = e->ops->ap_walk(e, cpu);
		if (ret)
			return ret;
	}
	/* From CPUHP_AP_OFFLINE (dying done) or below; the bring-up step's teardown waits
	 * for the CPU to report itself dead. */
	return walk_local_down(e, cpu, target);
}

static int walk(struct cpuhp_engine *e, unsigned cpu, int target)
{
	int state = e->cpus[cpu].state;

	e->cpus[cpu].target = target;
	if (target > state)
		return up(e, cpu, target);
	if (target < state)
		return down(e, cpu, target);
	return 0;
}

/* After a failure: back to where the transition started, with nothing injected. */
static void roll_back(struct cpuhp_engine *e, unsigned cpu, int ret)
{
	struct cpuhp_cpu *c = &e->cpus[cpu];
	int failed = c->failed_state;

	c->error = ret;
	/*
	 * A bring-up that timed out with the CPU alive in its atomic section (inside its
	 * STARTING steps, or done with them and its hotplug thread not run yet): only that CPU
	 * may run its STARTING teardowns. Walked from here they would act on this, the
	 * control, CPU: tick:starting's stops our clock event behind our hrtimer base's back,
	 * arch:starting's masks our LAPIC timer (KVM then drops every TSC-deadline write),
	 * sched:starting's takes our run queue offline; and the PREPARE teardowns would free
	 * the stacks it runs on. It stays where it is, refused like any CPU in that section
	 * (a dead-on-arrival CPU); its target goes back, so that if it runs on after all its
	 * hotplug thread takes it down through its own STARTING teardowns and it dies.
	 */
	if (c->state > CPUHP_BRINGUP_CPU && cpuhp_state_atomic(c->state)) {
		c->target = c->start;
		return;
	}
	c->rollback = true;
	walk(e, cpu, c->start);
	c->rollback = false;
	c->failed_state = failed;
}

static void begin(struct cpuhp_cpu *c)
{
	c->start = c->state;
	c->error = 0;
	c->failed_state = -1;
}

int cpuhp_engine_set_target(struct cpuhp_engine *e, unsigned cpu, int target)
{
	struct cpuhp_cpu *c;
	int ret;

	if (cpu >= e->nr_cpus || !cpuhp_valid_target(e, target))
		return -EINVAL;
	c = &e->cpus[cpu];
	if (cpuhp_state_atomic(c->state))
		return -EBUSY; /* a dead-on-arrival CPU: only a reset recovers it */
	begin(c);
	ret = walk(e, cpu, target);
	if (ret)
		roll_back(e, cpu, ret);
	return ret;
}

/*
 * Parallel bring-up, first half for one CPU: its PREPARE steps here on the control side,
 * then the kick; it is then `pending` until kicked_wait(). A CPU already running is left
 * for the second half.
 */
static void prepare_and_kick(struct cpuhp_engine *e, unsigned cpu, int target)
{
	struct cpuhp_cpu *c = &e->cpus[cpu];
	int ret;

	c->pending = false;
	if (c->state != CPUHP_BRINGUP_CPU - 1 && c->state >= CPUHP_BRINGUP_CPU)
		return; /* already running: walked in the second half */
	begin(c);
	c->target = target;
	ret = walk_local_up(e, cpu, CPUHP_BRINGUP_CPU - 1);
	if (!ret)
		ret = kick(e, cpu);
	if (ret)
		roll_back(e, cpu, ret);
	else
		c->pending = true;
}

/* Second half: wait for a kicked CPU (or walk one that was running). True if it got there. */
static bool kicked_wait(struct cpuhp_engine *e, unsigned cpu, int target)
{
	struct cpuhp_cpu *c = &e->cpus[cpu];
	int ret;

	if (!c->pending)
		return c->state >= CPUHP_BRINGUP_CPU && !cpuhp_state_atomic(c->state) &&
		       cpuhp_engine_set_target(e, cpu, target) == 0;
	c->pending = false;
	ret = e->ops->wait_up(e, cpu);
	if (ret)
		roll_back(e, cpu, ret);
	return !ret;
}

unsigned cpuhp_engine_bringup(struct cpuhp_engine *e, const unsigned *cpus, unsigned n, int target,
			      bool parallel)
{
	unsigned i, ok = 0;

	if (!cpuhp_valid_target(e, target) || target <= CPUHP_BRINGUP_CPU)
		parallel = false;
	if (!parallel) {
		for (i = 0; i < n; i++)
			ok += cpuhp_engine_set_target(e, cpus[i], target) == 0;
		return ok;
	}
	/* Every CPU's PREPARE steps on this (control) side, then all the kicks, then the waits. */
	for (i = 0; i < n; i++)
		if (cpus[i] < e->nr_cpus)
			prepare_and_kick(e, cpus[i], target);
	for (i = 0; i < n; i++)
		if (cpus[i] < e->nr_cpus)
			ok += kicked_wait(e, cpus[i], target);
	return ok;
}

int cpuhp_ap_starting(struct cpuhp_engine *e, unsigned cpu)
{
	struct cpuhp_cpu *c = &e->cpus[cpu];
	int ret;

	c->state = CPUHP_BRINGUP_CPU; /* alive */
	ret = walk_local_up(e, cpu, CPUHP_AP_ONLINE);
	if (ret)
		walk_local_down(e, cpu, CPUHP_BRINGUP_CPU); /* STARTING teardowns cannot fail */
	return ret;
}

int cpuhp_ap_walk_online(struct cpuhp_engine *e, unsigned cpu)
{
	struct cpuhp_cpu *c = &e->cpus[cpu];

	if (c->target > c->state)
		return walk_local_up(e, cpu, c->target);
	return walk_local_down(e, cpu, MAX(c->target, (int)CPUHP_AP_ONLINE));
}

void cpuhp_ap_dying(struct cpuhp_engine *e, unsigned cpu)
{
	walk_local_down(e, cpu, CPUHP_AP_OFFLINE);
}

/* ---- dynamic states --------------------------------------------------------------------- */

static int invoke_on(struct cpuhp_engine *e, unsigned cpu, int state, bool up)
{
	if (cpuhp_section_of(state) == CPUHP_SECTION_ONLINE && e->cpus[cpu].state > CPUHP_AP_ONLINE)
		return e->ops->ap_invoke(e, cpu, state, up);
	return cpuhp_invoke(e, cpu, state, up);
}

int cpuhp_engine_setup_state(struct cpuhp_engine *e, enum cpuhp_section section, const char *name,
			     cpuhp_cb startup, cpuhp_cb teardown, bool invoke)
{
	int lo, hi, s, slot = -1;
	unsigned cpu, undo;

	if (!name || !*name || cpuhp_state_by_name(e, name) >= 0)
		return -EINVAL;
	if (section == CPUHP_SECTION_PREPARE) {
		lo = CPUHP_BP_PREPARE_DYN;
		hi = CPUHP_BP_PREPARE_DYN_END;
	} else if (section == CPUHP_SECTION_ONLINE) {
		lo = CPUHP_AP_ONLINE_DYN;
		hi = CPUHP_AP_ONLINE_DYN_END;
	} else {
		return -EINVAL; /* STARTING code is the kernel's own */
	}
	for (s = lo; s <= hi && slot < 0; s++)
		if (!e->steps[s].name)
			slot = s;
	if (slot < 0)
		return -ENOSPC;
	e->steps[slot].name = name;
	e->steps[slot].startup = startup;
	e->steps[slot].teardown = teardown;
	e->steps[slot].serialize = true; /* unknown code: never concurrently */
	if (!invoke || !startup)
		return slot;
	for (cpu = 0; cpu < e->nr_cpus; cpu++) {
		int ret;

		if (e->cpus[cpu].state < slot)
			continue;
		ret = invoke_on(e, cpu, slot, true);
		if (!ret)
			continue;
		for (undo = 0; undo < cpu; undo++)
			if (e->cpus[undo].state >= slot && teardown)
				invoke_on(e, undo, slot, false);
		e->steps[slot].name = NULL;
		e->steps[slot].startup = e->steps[slot].teardown = NULL;
		return ret;
	}
	return slot;
}

int cpuhp_engine_remove_state(struct cpuhp_engine *e, int state, bool invoke)
{
	unsigned cpu;

	if (!((state >= CPUHP_BP_PREPARE_DYN && state <= CPUHP_BP_PREPARE_DYN_END) ||
	      (state >= CPUHP_AP_ONLINE_DYN && state <= CPUHP_AP_ONLINE_DYN_END)) ||
	    !e->steps[state].name)
		return -EINVAL;
	if (invoke && e->steps[state].teardown)
		for (cpu = 0; cpu < e->nr_cpus; cpu++)
			if (e->cpus[cpu].state >= state)
				invoke_on(e, cpu, state, false);
	for (cpu = 0; cpu < e->nr_cpus; cpu++)
		if (e->cpus[cpu].fail == state)
			e->cpus[cpu].fail = -1;
	e->steps[state].name = NULL;
	e->steps[state].startup = e->steps[state].teardown = NULL;
	e->steps[state].serialize = false;
	return 0;
}
