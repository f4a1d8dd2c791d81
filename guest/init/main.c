// SPDX-License-Identifier: MIT
/*
 * The boot sequence after the arch layer: start the boot CPU's services, then (in the init
 * thread) bring up the other CPUs through cpuhp and print the boot summary
 * line (a contract: "plugvm-guest: N/M CPUs online"), run requested self-tests, then power
 * off (`halt`, or after self-tests) or idle.
 */
#include "kernel/init.h"

#include "apps/agent_service.h"
#include "apps/bursts.h"
#include "apps/cyclic.h"
#include "apps/selftest.h"
#include "arch.h"
#include "drivers/acpi_hotplug.h"
#include "drivers/agent.h"
#include "drivers/load.h"
#include "drivers/uart.h"
#include "drivers/virtio_console.h"
#include "drivers/virtio_mmio.h"
#include "kernel/cmdline.h"
#include "kernel/cpu.h"
#include "kernel/cpuhp.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "kernel/watchdog.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/smp.h"

/* Words other tools put on every kernel's command line (libvirt: console=): accepted. */
CMDLINE_PARAM(console, .name = "console", .kind = CMDLINE_IGNORED);
CMDLINE_PARAM(earlyprintk, .name = "earlyprintk", .kind = CMDLINE_IGNORED);
CMDLINE_PARAM(halt, .name = "halt", .kind = CMDLINE_FLAG);
CMDLINE_PARAM(selftest_stay, .name = "selftest.stay", .kind = CMDLINE_FLAG);
CMDLINE_PARAM(crash, .name = "crash", .kind = CMDLINE_ENUM,
	      .choices = "ud|gp|pf|de|bp|df|triple|panic");

/* `crash=KIND`: fault on purpose, so tests can check the panic and crash paths. */
static void crash_from_cmdline(void)
{
	size_t len;
	const char *kind = cmdline_value("crash", &len);

	if (!kind)
		return;
	printk("plugvm-guest: crashing on purpose (crash=%.*s)\n", (int)len, kind);
	if (len == 5 && !memcmp(kind, "panic", 5))
		panic("crash=panic requested on the command line");
	arch_crash(kind, len);
	pr_warn("unknown crash kind '%.*s' (ud gp pf de bp df triple panic)\n", (int)len, kind);
}

extern const struct cmdline_param __start_cmdline_params[], __stop_cmdline_params[];

static void cmdline_problem(void *ctx, bool fatal, const char *word, size_t len, const char *why)
{
	if (fatal) {
		printk("cmdline: '%.*s' %s\n", (int)len, word, why);
		*(bool *)ctx = true;
	} else {
		pr_warn("cmdline: '%.*s' %s\n", (int)len, word, why);
	}
}

/* Say what is wrong with each word of the command line; stop on a bad value. */
static void check_cmdline(void)
{
	bool fatal = false;

	cmdline_check(__start_cmdline_params,
		      (size_t)(__stop_cmdline_params - __start_cmdline_params), cmdline_problem,
		      &fatal);
	if (fatal)
		boot_stop_bad_cmdline();
}

/* The first thread: what the command line asks for once every CPU is up. */
static int init_main(void *arg)
{
	int st;

	(void)arg;
	watchdog_init(); /* a hang from here on is reported, not just waited out */
	load_start(); /* before the others come up: each publishes from its first idle entry */
	cpuhp_boot_secondaries();
	printk("plugvm-guest: %u/%u CPUs online\n", cpumask_weight(&cpu_online_mask),
	       cpumask_weight(&cpu_present_mask));
	crash_from_cmdline();
	uart_rx_start(); /* typed input where virtio-console is absent (QEMU) or off */
	virtio_console_start();
	/* After the boot bring-up: the agent's session (and its events) starts here. */
	agent_service_start();
	acpi_hotplug_start(); /* CPUs may come and go from now on */
	cyclic_start(); /* `latency`: the measurement runs beside whatever follows */
	st = selftest_run_cmdline();
	/* `selftest.stay`: keep running afterwards, for a host that checks the aftermath. */
	if (st >= 0 && cmdline_flag("selftest.stay")) {
		printk("selftest: done (%s), staying up\n", st == 0 ? "all passed" : "failures");
		return 0;
	}
	if (st >= 0)
		arch_poweroff(st == 0 ? 0 : GUEST_EXIT_SELFTEST_FAILED);
	bursts_run(); /* `bursts=N`: the autoscaling benchmark's load, then on */
	if (cmdline_flag("halt"))
		arch_poweroff(0);
	/* Never idle without a word: whoever waits for an end should know there is none. */
	printk("plugvm-guest: boot done, staying up (`halt` or `selftest=` on the command line "
	       "power off afterwards; the console's `poweroff` does now)\n");
	return 0;
}

__noreturn void kernel_main(void)
{
	/* virtio first, so that the rest of the boot (and its chatter) goes through it. */
	if (virtio_mmio_probe()) {
		virtio_console_init();
		agent_init();
	}
	check_cmdline();
	printk("plugvm-guest: %u possible CPUs, %u present, TSC %u kHz (%s)\n", nr_cpu_ids,
	       cpumask_weight(&cpu_present_mask), arch_tsc_khz(), arch_tsc_source());
	sched_init_boot_cpu();
	time_init();
	timers_prepare_cpu(0);
	tick_starting_cpu(0);
	printk("plugvm-guest: clock event %s at %u kHz, TSC %u kHz, HZ %u\n", arch_timer_mode(),
	       arch_timer_khz(), arch_tsc_khz(), HZ);
	if (timers_online_cpu(0))
		panic("cannot start the timer thread of cpu 0");
	smp_init();
	cpuhp_init();
	printk("cpu 0: online (apic %u, boot CPU)\n", cpu_apic_ids[0]);

	arch_irq_enable();
	/* On the boot CPU, which never goes offline: panics report it as cpu 0. */
	if (!thread_run("init", init_main, NULL, 10, 0))
		panic("cannot create the init thread");
	sched_idle();
}
