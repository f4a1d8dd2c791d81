/* SPDX-License-Identifier: MIT */
/*
 * The CPU hotplug states, in bring-up order (tear-down runs them backwards). Pure data:
 * shared by the guest's table (kernel/cpuhp_table.c), the engine and its host unit tests.
 *
 *   PREPARE   run on the control CPU before the new CPU runs / after it died
 *   STARTING  run on the arriving / dying CPU itself, interrupts off
 *   ONLINE    run in the arriving / dying CPU's hotplug thread (cpuhp/N), preemptible
 *
 * Markers (no callbacks) bound the sections. A CPU may rest only in a state that is not
 * "atomic": the bring-up step and the STARTING section are crossed in one go.
 */
#ifndef PLUGVM_KERNEL_CPUHP_STATES_H
#define PLUGVM_KERNEL_CPUHP_STATES_H

#define CPUHP_BP_DYN_SLOTS 4
#define CPUHP_AP_DYN_SLOTS 8

enum cpuhp_state {
	CPUHP_OFFLINE = 0,
	/* PREPARE, on the control CPU */
	CPUHP_PERCPU_PREPARE, /* per-CPU area, kernel and IST stacks */
	CPUHP_THREADS_PREPARE, /* the CPU's hotplug thread (created once, parked while away) */
	CPUHP_SCHED_PREPARE, /* run queue and idle thread */
	CPUHP_TIMERS_PREPARE, /* timer wheels and hrtimer base; tear-down pulls their timers */
	CPUHP_BP_PREPARE_DYN,
	CPUHP_BP_PREPARE_DYN_END = CPUHP_BP_PREPARE_DYN + CPUHP_BP_DYN_SLOTS - 1,
	CPUHP_BRINGUP_CPU, /* kick the CPU / wait for it to report itself dead */
	/* STARTING, on the CPU with interrupts off */
	CPUHP_AP_OFFLINE, /* marker: the CPU runs kernel code */
	CPUHP_AP_ARCH_STARTING, /* GDT, IDT, TSS, LAPIC */
	CPUHP_AP_SCHED_STARTING, /* the run queue takes the CPU's own threads */
	CPUHP_AP_TICK_STARTING, /* LAPIC clock event and the tick */
	CPUHP_AP_ONLINE_MASK, /* cross-CPU calls accepted; the CPU joins cpu_online_mask */
	CPUHP_AP_ONLINE, /* marker: STARTING done, the hotplug thread takes over */
	/* ONLINE, in the hotplug thread */
	CPUHP_AP_ONLINE_IDLE, /* marker: the thread runs; the CPU is online, not active */
	CPUHP_AP_TIMERS_ONLINE, /* timer thread and remote timer requests */
	CPUHP_AP_WATCHDOG_ONLINE, /* the lockup detector's heartbeat */
	CPUHP_AP_ONLINE_DYN,
	CPUHP_AP_ONLINE_DYN_END = CPUHP_AP_ONLINE_DYN + CPUHP_AP_DYN_SLOTS - 1,
	CPUHP_AP_SCHED_ACTIVE, /* threads may be placed here; tear-down moves them away */
	CPUHP_ONLINE,
	CPUHP_NR_STATES,
};

enum cpuhp_section {
	CPUHP_SECTION_PREPARE,
	CPUHP_SECTION_STARTING,
	CPUHP_SECTION_ONLINE,
};

static inline enum cpuhp_section cpuhp_section_of(int state)
{
	if (state <= CPUHP_BRINGUP_CPU)
		return CPUHP_SECTION_PREPARE;
	if (state <= CPUHP_AP_ONLINE)
		return CPUHP_SECTION_STARTING;
	return CPUHP_SECTION_ONLINE;
}

/* Crossed in one go: a CPU never rests in these. */
static inline int cpuhp_state_atomic(int state)
{
	return state >= CPUHP_BRINGUP_CPU && state <= CPUHP_AP_ONLINE;
}

#endif
