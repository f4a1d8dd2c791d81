// SPDX-License-Identifier: MIT
/*
 * CPU hotplug in the guest: the per-CPU hotplug threads, cpuhp's own steps, and the
 * contexts the engine (kernel/cpuhp_engine.c) walks the table (kernel/cpuhp_table.c) in.
 *
 * Bring-up: the control thread runs the PREPARE steps, then the bring-up step kicks the
 * CPU. The CPU runs its STARTING steps itself with interrupts off (cpuhp_ap_entry), wakes
 * its hotplug thread cpuhp/N and goes idle; the thread runs the ONLINE steps up to the
 * target and completes the control thread's wait.
 * Tear-down: the control thread asks cpuhp/N to walk down; it runs the ONLINE teardowns
 * (threads and timers leave), then with interrupts off the STARTING teardowns, marks the
 * CPU dying and parks itself; the idle loop stores "dead" as its last act and halts. The
 * bring-up step's teardown, on the control side, waits for that store; then the PREPARE
 * teardowns pull the dead CPU's timers and free its idle thread and stacks.
 */
#include "kernel/cpuhp.h"

#include "arch.h"
#include "kernel/cmdline.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/mutex.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/smp.h"
#include "kernel/spinlock.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "kernel/watchdog.h"
#include "kernel/wait.h"

CMDLINE_PARAM(trace, .name = "cpuhp.trace", .kind = CMDLINE_FLAG);
CMDLINE_PARAM(parallel, .name = "cpuhp.parallel", .kind = CMDLINE_UINT, .max = 1);
CMDLINE_PARAM(fail, .name = "cpuhp.fail", .kind = CMDLINE_STRING);

#define CPUHP_THREAD_PRIO   98 /* above every workload; the RT timer thread is 97 */
#define CPUHP_START_TIMEOUT 10000000000ull /* Linux waits 10 s for a CPU to come alive */
#define CPUHP_DEATH_TIMEOUT 10000000000ull
#define CPUHP_DEAD_POLL	    50000000ull /* a bring-up looks for a STARTING failure this often */

enum hp_work { HP_WORK_NONE, HP_WORK_WALK, HP_WORK_INVOKE };

struct hp_percpu {
	struct thread *thread; /* cpuhp/N: created once, parked while the CPU is away */
	struct waitqueue wq; /* the thread waits here for work */
	int work; /* enum hp_work */
	int inv_state;
	bool inv_up;
	int result; /* of the work, for the control side */
	struct completion done; /* the work is finished */
	int dead; /* stored last by the dying CPU (arch_cpu_dead) */
	bool announced; /* printed "cpu N: online" once */
};

static struct cpuhp_engine hp;
static struct cpuhp_cpu hp_cpus[NR_CPUS];
static struct hp_percpu hpc[NR_CPUS];
static struct mutex hp_mutex; /* one transition (or registration) at a time */
static struct mutex serial_mutex; /* steps marked serialize, thread context */
static struct spinlock serial_spin = SPINLOCK_INIT("cpuhp.serial"); /* ... interrupts off */
static cpuhp_trace_fn trace_fn;
static bool trace_print;

static int hp_thread(void *arg);

/* ---- cpuhp's own steps (kernel/cpuhp_table.c lists every step) ------------------------- */

int cpuhp_threads_prepare(unsigned int cpu)
{
	struct hp_percpu *p = &hpc[cpu];
	char name[16];

	if (p->thread)
		return 0; /* parked since the CPU last went down */
	snprintf(name, sizeof(name), "cpuhp/%u", cpu);
	p->thread =
	    kthread_run_on_cpu(name, hp_thread, (void *)(uintptr_t)cpu, CPUHP_THREAD_PRIO, cpu);
	return p->thread ? 0 : -ENOMEM;
}

/* Poll with a growing sleep: the dying CPU cannot wake us (its stack is about to go). */
static bool wait_flag(const int *flag, uint64_t timeout_ns)
{
	uint64_t deadline = arch_now_ns() + timeout_ns, nap = 2000;
	unsigned spins = 0;

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		if (arch_now_ns() > deadline)
			return false;
		if (spins < 64) { /* it is usually a few instructions away */
			spins++;
			arch_cpu_relax();
			continue;
		}
		sleep_ns(nap);
		if (nap < 1000000)
			nap *= 2;
	}
	return true;
}

int cpuhp_wait_dead(unsigned int cpu)
{
	if (!wait_flag(&hpc[cpu].dead, CPUHP_DEATH_TIMEOUT)) {
		pr_warn("cpu %u: did not report itself dead within 10 s\n", cpu);
		arch_cpu_dead_cleanup(cpu);
		return -ETIMEDOUT;
	}
	arch_cpu_dead_cleanup(cpu);
	return 0;
}

/* ---- the contexts -------------------------------------------------------------------------- */

static uint64_t op_now_ns(void)
{
	return arch_now_ns();
}

static int op_kick(struct cpuhp_engine *e, unsigned cpu)
{
	struct hp_percpu *p = &hpc[cpu];

	(void)e;
	WRITE_ONCE(cpu_table[cpu]->dying, 0); /* the struct cpu outlives each life */
	__atomic_store_n(&p->dead, 0, __ATOMIC_RELEASE);
	p->result = 0;
	p->work = HP_WORK_NONE;
	reinit_completion(&p->done);
	return arch_cpu_kick(cpu);
}

static int op_wait_up(struct cpuhp_engine *e, unsigned cpu)
{
	struct hp_percpu *p = &hpc[cpu];
	uint64_t deadline = arch_now_ns() + CPUHP_START_TIMEOUT;

	/*
	 * The CPU's hotplug thread completes `done` at its target (or when an ONLINE step
	 * failed) and wakes us. A failed STARTING step cannot: the CPU may not have its LAPIC
	 * or IDT yet (arch:starting sets them up), so it only stores `dead`, which we look at
	 * every CPUHP_DEAD_POLL: a healthy bring-up wakes us once, by `done`, not once a nap.
	 */
	for (;;) {
		uint64_t now = arch_now_ns(), nap = CPUHP_DEAD_POLL;

		if (now >= deadline)
			break;
		if (deadline - now < nap)
			nap = deadline - now;
		if (wait_for_completion_timeout(&p->done, nap))
			return p->result; /* its hotplug thread got to the target, or failed */
		if (__atomic_load_n(&p->dead, __ATOMIC_ACQUIRE))
			return p->result ? p->result : -EIO; /* a STARTING step failed */
	}
	pr_warn("cpu %u: did not come online within 10 s (state %s)\n", cpu,
		cpuhp_state_name(e, e->cpus[cpu].state));
	arch_cpu_dead_cleanup(cpu); /* a late start finds no stack and halts */
	return -ETIMEDOUT;
}

static int run_on_thread(unsigned cpu, int work, int state, bool up)
{
	struct hp_percpu *p = &hpc[cpu];

	p->result = 0;
	p->inv_state = state;
	p->inv_up = up;
	reinit_completion(&p->done);
	__atomic_store_n(&p->work, work, __ATOMIC_RELEASE);
	wake_up_all(&p->wq);
	wait_for_completion(&p->done);
	return p->result;
}

static int op_ap_walk(struct cpuhp_engine *e, unsigned cpu)
{
	(void)e;
	return run_on_thread(cpu, HP_WORK_WALK, 0, false);
}

static int op_ap_invoke(struct cpuhp_engine *e, unsigned cpu, int state, bool up)
{
	(void)e;
	return run_on_thread(cpu, HP_WORK_INVOKE, state, up);
}

static void op_serial_lock(enum cpuhp_section s)
{
	if (s == CPUHP_SECTION_STARTING)
		spin_lock(&serial_spin);
	else
		mutex_lock(&serial_mutex);
}

static void op_serial_unlock(enum cpuhp_section s)
{
	if (s == CPUHP_SECTION_STARTING)
		spin_unlock(&serial_spin);
	else
		mutex_unlock(&serial_mutex);
}

static void op_trace(unsigned cpu, int state, bool up, uint64_t ns, int ret)
{
	cpuhp_trace_fn fn = READ_ONCE(trace_fn);

	if (trace_print)
		printk("cpuhp: cpu %u %s %s %lu ns%s\n", cpu, cpuhp_state_name(&hp, state),
		       up ? "up" : "down", (unsigned long)ns, ret ? " FAILED" : "");
	if (fn)
		fn(cpu, state, up, ns, ret);
}

static const struct cpuhp_ops ops = {
	.now_ns = op_now_ns,
	.kick = op_kick,
	.wait_up = op_wait_up,
	.ap_walk = op_ap_walk,
	.ap_invoke = op_ap_invoke,
	.serial_lock = op_serial_lock,
	.serial_unlock = op_serial_unlock,
	.trace = op_trace,
};

/* cpuhp/N: ONLINE steps, and on the way down the STARTING teardowns and the park. */
static int hp_thread(void *arg)
{
	unsigned cpu = (unsigned)(uintptr_t)arg;
	struct hp_percpu *p = &hpc[cpu];
	struct cpuhp_cpu *c = &hp_cpus[cpu];

	for (;;) {
		int work, ret;

		wait_event(&p->wq, __atomic_load_n(&p->work, __ATOMIC_ACQUIRE) != HP_WORK_NONE);
		work = p->work;
		p->work = HP_WORK_NONE;
		if (work == HP_WORK_INVOKE) {
			p->result = cpuhp_invoke(&hp, cpu, p->inv_state, p->inv_up);
			complete(&p->done);
			continue;
		}
		ret = cpuhp_ap_walk_online(&hp, cpu);
		if (ret || c->target >= CPUHP_AP_ONLINE) {
			if (!ret && c->state == CPUHP_ONLINE && !p->announced) {
				p->announced = true;
				printk("cpu %u: online (apic %u)\n", cpu, cpu_apic_ids[cpu]);
			}
			p->result = ret;
			complete(&p->done);
			continue;
		}
		/* Down through STARTING: interrupts stay off until this CPU is dead. */
		arch_irq_disable();
		cpuhp_ap_dying(&hp, cpu);
		p->result = 0;
		WRITE_ONCE(this_cpu()->dying, 1);
		complete(&p->done);
		sched_park_current(); /* the idle loop reports the death */
		/* A new life: the arriving CPU unparked us with work queued. */
		arch_irq_enable();
	}
	return 0;
}

__noreturn void cpuhp_ap_entry(unsigned cpu)
{
	struct hp_percpu *p = &hpc[cpu];
	int ret = cpuhp_ap_starting(&hp, cpu);

	if (ret) {
		p->result = ret;
		arch_cpu_dead(&p->dead); /* nothing of ours is left to undo */
	}
	__atomic_store_n(&p->work, HP_WORK_WALK, __ATOMIC_RELEASE);
	sched_unpark_percpu(cpu); /* cpuhp/N (and our other per-CPU threads) run here now */
	sched_idle();
}

__noreturn void cpuhp_idle_dead(void)
{
	arch_cpu_dead(&hpc[smp_processor_id()].dead);
}

/* ---- control ------------------------------------------------------------------------------ */

void cpuhp_init(void)
{
	unsigned cpu;

	mutex_init(&hp_mutex, "cpuhp");
	mutex_init(&serial_mutex, "cpuhp.serial");
	cpuhp_engine_init(&hp, cpuhp_table, &ops, hp_cpus, nr_cpu_ids);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		waitqueue_init(&hpc[cpu].wq, "cpuhp.work");
		completion_init(&hpc[cpu].done);
	}
	trace_print = cmdline_flag("cpuhp.trace");
	/* The boot CPU came up by the boot path and stays; its thread serves dynamic states. */
	hp_cpus[0].state = CPUHP_ONLINE;
	hp_cpus[0].target = CPUHP_ONLINE;
	hpc[0].announced = true;
	if (cpuhp_threads_prepare(0))
		pr_warn("cpuhp: cannot create cpuhp/0\n");
	if (arch_smp_init()) /* no way to start them: they stay absent */
		for (cpu = 1; cpu < nr_cpu_ids; cpu++)
			cpumask_clear(&cpu_present_mask, cpu);
}

/* A decimal number of at most 6 digits filling v[0..len); -1 if it is not one. */
static int small_number(const char *v, size_t len)
{
	int n = 0;
	size_t i;

	if (!len || len > 6)
		return -1;
	for (i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		n = n * 10 + (v[i] - '0');
	}
	return n;
}

/*
 * `cpuhp.fail=CPU:STATE`: fail that CPU's boot-time bring-up at that state (for tests);
 * STATE is a name or an id, as QMP's cpuhp-fail takes it. A bad value stops the boot.
 */
static void fail_from_cmdline(void)
{
	size_t len, i;
	const char *v = cmdline_value("cpuhp.fail", &len);
	char name[48];
	int cpu, state;

	if (!v)
		return;
	for (i = 0; i < len && v[i] != ':'; i++)
		;
	cpu = small_number(v, i);
	if (cpu < 0 || i >= len || len - i - 1 >= sizeof(name) || len - i - 1 == 0)
		boot_stop_bad_word("cpuhp.fail", v, len, "expected CPU:STATE (a state name or id)");
	memcpy(name, v + i + 1, len - i - 1);
	name[len - i - 1] = 0;
	state = small_number(name, len - i - 1);
	if (state < 0)
		state = cpuhp_state_by_name(&hp, name);
	if (state < 0 || !cpuhp_state_name(&hp, state) || !cpuhp_state_name(&hp, state)[0])
		boot_stop_bad_word("cpuhp.fail", v, len,
				   "no such cpuhp state (selftest=cpuhp_states lists them)");
	if (cpu == 0 || (unsigned)cpu >= nr_cpu_ids)
		boot_stop_bad_word("cpuhp.fail", v, len,
				   "no such secondary CPU (the boot CPU never goes through cpuhp)");
	if (cpuhp_engine_inject_fail(&hp, (unsigned)cpu, state))
		boot_stop_bad_word("cpuhp.fail", v, len, "that state cannot fail");
}

void cpuhp_boot_secondaries(void)
{
	unsigned list[NR_CPUS], n = 0, cpu;
	bool parallel = cmdline_uint("cpuhp.parallel", 1) != 0;

	fail_from_cmdline();

	for_each_cpu(cpu, &cpu_present_mask)
		if (cpu != 0)
			list[n++] = cpu;
	if (!n)
		return;
	cpuhp_bringup_cpus(list, n, CPUHP_ONLINE, parallel, NULL);
	for (cpu = 0; cpu < n; cpu++)
		if (hp_cpus[list[cpu]].state != CPUHP_ONLINE)
			pr_warn("cpu %u: bring-up failed at %s (error %d)\n", list[cpu],
				hp_cpus[list[cpu]].failed_state >= 0
				    ? cpuhp_state_name(&hp, hp_cpus[list[cpu]].failed_state)
				    : "?",
				hp_cpus[list[cpu]].error);
}

static bool valid_cpu(unsigned cpu)
{
	return cpu > 0 && cpu < nr_cpu_ids;
}

int cpuhp_set_target(unsigned cpu, int target)
{
	int ret;

	if (!valid_cpu(cpu))
		return -EINVAL;
	if (target > CPUHP_OFFLINE && !cpumask_test(&cpu_present_mask, cpu))
		return -ENODEV; /* not plugged in */
	mutex_lock(&hp_mutex);
	ret = cpuhp_engine_set_target(&hp, cpu, target);
	mutex_unlock(&hp_mutex);
	return ret;
}

unsigned cpuhp_bringup_cpus(const unsigned *cpus, unsigned n, int target, bool parallel,
			    uint64_t *ns)
{
	unsigned list[NR_CPUS], m = 0, i, ok;
	uint64_t t0;

	for (i = 0; i < n && m < NR_CPUS; i++)
		if (valid_cpu(cpus[i]) && cpumask_test(&cpu_present_mask, cpus[i]))
			list[m++] = cpus[i];
	mutex_lock(&hp_mutex);
	t0 = arch_now_ns();
	ok = cpuhp_engine_bringup(&hp, list, m, target, parallel);
	if (ns)
		*ns = arch_now_ns() - t0;
	mutex_unlock(&hp_mutex);
	return ok;
}

int cpuhp_fail(unsigned cpu, int state)
{
	int ret;

	if (!valid_cpu(cpu))
		return -EINVAL;
	mutex_lock(&hp_mutex);
	ret = cpuhp_engine_inject_fail(&hp, cpu, state);
	mutex_unlock(&hp_mutex);
	return ret;
}

int cpuhp_state(unsigned cpu)
{
	return cpu < nr_cpu_ids ? READ_ONCE(hp_cpus[cpu].state) : -EINVAL;
}

void cpuhp_activity(unsigned cpu, struct cpuhp_activity *a)
{
	*a = (struct cpuhp_activity){ 0 };
	if (cpu >= nr_cpu_ids)
		return;
	a->started = __atomic_load_n(&hp_cpus[cpu].started, __ATOMIC_ACQUIRE);
	a->running = __atomic_load_n(&hp_cpus[cpu].running, __ATOMIC_RELAXED);
	a->last = __atomic_load_n(&hp_cpus[cpu].last, __ATOMIC_RELAXED);
}

int cpuhp_target(unsigned cpu)
{
	return cpu < nr_cpu_ids ? READ_ONCE(hp_cpus[cpu].target) : -EINVAL;
}

int cpuhp_last_error(unsigned cpu, int *failed_state)
{
	if (cpu >= nr_cpu_ids)
		return -EINVAL;
	if (failed_state)
		*failed_state = hp_cpus[cpu].failed_state;
	return hp_cpus[cpu].error;
}

int cpuhp_fail_state(unsigned cpu)
{
	return cpu < nr_cpu_ids ? READ_ONCE(hp_cpus[cpu].fail) : -1;
}

uint64_t cpuhp_state_ns(unsigned cpu, int state, bool up)
{
	if (cpu >= nr_cpu_ids || state < 0 || state >= CPUHP_NR_STATES)
		return 0;
	return up ? hp_cpus[cpu].up_ns[state] : hp_cpus[cpu].down_ns[state];
}

int cpuhp_state_id(const char *name)
{
	return cpuhp_state_by_name(&hp, name);
}

const char *cpuhp_name(int state)
{
	return cpuhp_state_name(&hp, state);
}

bool cpuhp_state_info(int id, struct cpuhp_state_info *info)
{
	if (id < 0 || id >= CPUHP_NR_STATES || !hp.steps[id].name)
		return false;
	info->id = id;
	info->name = hp.steps[id].name;
	info->section = cpuhp_section_of(id);
	info->can_rest = cpuhp_valid_target(&hp, id);
	/* The rule of cpuhp_engine_inject_fail(). */
	info->can_fail = id > CPUHP_OFFLINE && id < CPUHP_ONLINE &&
			 (hp.steps[id].startup || hp.steps[id].teardown || id == CPUHP_BRINGUP_CPU);
	info->serialize = hp.steps[id].serialize;
	return true;
}

int cpuhp_setup_state(enum cpuhp_section section, const char *name, cpuhp_cb startup,
		      cpuhp_cb teardown, bool invoke_on_online)
{
	int ret;

	mutex_lock(&hp_mutex);
	ret = cpuhp_engine_setup_state(&hp, section, name, startup, teardown, invoke_on_online);
	mutex_unlock(&hp_mutex);
	return ret;
}

int cpuhp_remove_state(int state, bool invoke)
{
	int ret;

	mutex_lock(&hp_mutex);
	ret = cpuhp_engine_remove_state(&hp, state, invoke);
	mutex_unlock(&hp_mutex);
	return ret;
}

void cpuhp_set_trace(cpuhp_trace_fn fn)
{
	WRITE_ONCE(trace_fn, fn);
}
