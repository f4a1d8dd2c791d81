// SPDX-License-Identifier: MIT
/*
 * The console monitor's commands (see monitor.h): typed lines from any console
 * (virtio-console, the 16550), edited by monitor_input.c, run here.
 */
#include "drivers/monitor.h"

#include "arch.h"
#include "drivers/virtio_console.h"
#include "kernel/cpu.h"
#include "kernel/hrtimer.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/string.h"
#include "kernel/timer.h"

static bool word_is(const char *w, size_t n, const char *cmd)
{
	return n == strlen(cmd) && !memcmp(w, cmd, n);
}

static void cmd_cpus(void)
{
	char list[160];
	size_t used = 0;
	unsigned cpu;

	list[0] = '\0';
	for_each_cpu(cpu, &cpu_online_mask) {
		int n = snprintf(list + used, sizeof(list) - used, " %u", cpu);

		if (n < 0 || (size_t)n >= sizeof(list) - used)
			break;
		used += (size_t)n;
	}
	printk("cpus: %u online of %u present (%u possible):%s\n", cpumask_weight(&cpu_online_mask),
	       cpumask_weight(&cpu_present_mask), nr_cpu_ids, list);
}

static void cmd_stats(void)
{
	uint64_t switches = 0, preempt = 0, wakeups = 0, ipis = 0, ticks = 0, callbacks = 0;
	unsigned cpu;

	for_each_cpu(cpu, &cpu_online_mask) {
		struct sched_stats ss;
		struct wheel_stats ws;
		struct timer_cpu_stats ts;

		sched_get_stats(cpu, &ss);
		timer_get_stats(cpu, &ws, &ts);
		switches += ss.switches;
		preempt += ss.preemptions;
		wakeups += ss.wakeups_local + ss.wakeups_remote;
		ipis += ss.resched_ipis;
		ticks += ts.ticks;
		callbacks += ts.callbacks;
	}
	printk("stats: jiffies=%lu switches=%lu preemptions=%lu wakeups=%lu resched_ipis=%lu "
	       "ticks=%lu timer_callbacks=%lu console_kicks=%lu\n",
	       (unsigned long)jiffies, (unsigned long)switches, (unsigned long)preempt,
	       (unsigned long)wakeups, (unsigned long)ipis, (unsigned long)ticks,
	       (unsigned long)callbacks, virtio_console_kicks());
}

void monitor_run(const char *s, size_t n)
{
	size_t w = 0, rest;

	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (!n)
		return;
	while (w < n && s[w] != ' ')
		w++;
	rest = w < n ? w + 1 : n;
	if (word_is(s, w, "help"))
		printk("monitor: help | echo TEXT | cpus | stats | threads | poweroff\n");
	else if (word_is(s, w, "echo"))
		printk("%.*s\n", (int)(n - rest), s + rest);
	else if (word_is(s, w, "cpus"))
		cmd_cpus();
	else if (word_is(s, w, "stats"))
		cmd_stats();
	else if (word_is(s, w, "threads")) {
		sched_dump_threads();
		hrtimer_dump_bases();
	} else if (word_is(s, w, "poweroff")) {
		printk("monitor: powering off\n");
		arch_poweroff(0);
	} else
		printk("monitor: unknown command '%.*s' (try help)\n", (int)w, s);
}
