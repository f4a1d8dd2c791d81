// SPDX-License-Identifier: MIT
/*
 * panic(): report once, stop the other CPUs, power off with a failure status; and the
 * boot's stop on a bad command-line value.
 */
#include "kernel/panic.h"

#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/printk.h"

static int panic_cpu = -1;

bool panic_in_progress(void)
{
	return __atomic_load_n(&panic_cpu, __ATOMIC_ACQUIRE) >= 0;
}

bool panic_enter(void)
{
	int me = (int)raw_smp_processor_id(), expect = -1;

	arch_irq_disable();
	if (__atomic_compare_exchange_n(&panic_cpu, &expect, me, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		/* Another CPU may have died holding the console lock. */
		console_force_unlock();
		return true;
	}
	if (expect == me)
		printk("PANIC: recursive panic on cpu %d; halting\n", me);
	arch_halt_forever();
}

__noreturn void panic_finish(void)
{
	arch_stop_other_cpus();
	arch_poweroff(GUEST_EXIT_PANIC);
}

__noreturn void boot_stop_bad_cmdline(void)
{
	printk("plugvm-guest: stopping: a bad value on the command line (README lists the "
	       "words)\n");
	arch_poweroff(GUEST_EXIT_BAD_CMDLINE);
}

__noreturn void boot_stop_bad_word(const char *name, const char *value, size_t len, const char *why)
{
	printk("cmdline: '%s=%.*s' %s\n", name, (int)len, value, why);
	boot_stop_bad_cmdline();
}

__noreturn void panic(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	panic_enter();
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printk("PANIC: cpu %u: %s\n", smp_processor_id(), msg);
	arch_backtrace();
	panic_finish();
}
