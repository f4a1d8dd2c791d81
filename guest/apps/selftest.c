// SPDX-License-Identifier: MIT
/* The self-test registry and runner (`selftest=NAME[,NAME...]`, `all`, `list`). */
#include "apps/selftest.h"

#include "arch.h"
#include "kernel/bug.h"
#include "kernel/cmdline.h"
#include "kernel/cpu.h"
#include "kernel/lockdep.h"
#include "kernel/printk.h"
#include "kernel/string.h"

CMDLINE_PARAM(selftest, .name = "selftest", .kind = CMDLINE_STRING);

extern const struct selftest __start_selftests[], __stop_selftests[];

static const struct selftest *current;
static char fail_reason[200];
static unsigned nr_passed, nr_failed;

int selftest_fail(const char *fmt, ...)
{
	va_list ap;

	if (!fail_reason[0]) {
		va_start(ap, fmt);
		vsnprintf(fail_reason, sizeof(fail_reason), fmt, ap);
		va_end(ap);
	}
	return -1;
}

void selftest_report(const char *fmt, ...)
{
	char line[240];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	printk("selftest %s: %s\n", current ? current->name : "?", line);
}

unsigned selftest_other_cpu(unsigned except)
{
	unsigned cpu, pick = except;

	for_each_cpu(cpu, &cpu_online_mask)
		if (cpu != except)
			pick = cpu;
	return pick;
}

#define VEC_SELFTEST 0xe0

static void (*irq_fn)(void *);
static void *irq_arg;

static void selftest_irq(unsigned vector, void *arg)
{
	(void)vector;
	(void)arg;
	if (irq_fn)
		irq_fn(irq_arg);
}

void selftest_irq_set(void (*fn)(void *), void *arg)
{
	irq_fn = fn;
	irq_arg = arg;
	if (fn)
		arch_set_irq_handler(VEC_SELFTEST, selftest_irq, NULL);
}

void selftest_irq_raise(void)
{
	arch_send_ipi(this_cpu()->apic_id, VEC_SELFTEST);
}

static bool run_one(const struct selftest *t)
{
	int ret;

	current = t;
	fail_reason[0] = '\0';
	ret = t->fn ? t->fn() : t->fn_arg(t->arg);
	if (ret == 0 && !fail_reason[0]) {
		printk("selftest %s: pass\n", t->name);
	} else {
		if (!fail_reason[0])
			snprintf(fail_reason, sizeof(fail_reason), "returned %d", ret);
		printk("selftest %s: fail %s\n", t->name, fail_reason);
	}
	current = NULL;
	if (ret == 0 && !fail_reason[0])
		nr_passed++;
	else
		nr_failed++;
	return ret == 0 && !fail_reason[0];
}

/* Unexpected kernel bug reports so far: BUG lines and lock-validator reports. */
static uint64_t bug_reports(void)
{
	struct lockdep_stats ls;

	lockdep_get_stats(&ls);
	return bug_count() + ls.unexpected;
}

/* The last line of a run: counts, and a failure if the kernel reported a bug since boot. */
static bool summary(void)
{
	uint64_t bugs = bug_reports();

	if (bugs)
		printk("selftest: %u passed, %u failed, %lu unexpected BUG reports\n", nr_passed,
		       nr_failed, (unsigned long)bugs);
	else
		printk("selftest: %u passed, %u failed\n", nr_passed, nr_failed);
	return !nr_failed && !bugs;
}

static const struct selftest *find(const char *name, size_t len)
{
	const struct selftest *t;

	for (t = __start_selftests; t < __stop_selftests; t++)
		if (strlen(t->name) == len && !memcmp(t->name, name, len))
			return t;
	return NULL;
}

int selftest_run_cmdline(void)
{
	size_t len, i = 0;
	const char *v = cmdline_value("selftest", &len);
	const struct selftest *t;
	bool ok = true;

	if (!v || !len)
		return -1;
	if (len == 4 && !memcmp(v, "list", 4)) {
		for (t = __start_selftests; t < __stop_selftests; t++)
			printk("selftest list: %s%s\n", t->name,
			       t->explicit_only ? " (not in all)" : "");
		return 0;
	}
	if (len == 3 && !memcmp(v, "all", 3)) {
		for (t = __start_selftests; t < __stop_selftests; t++)
			if (!t->explicit_only)
				ok &= run_one(t);
		return summary() && ok ? 0 : 1;
	}
	while (i < len) {
		size_t j = i;

		while (j < len && v[j] != ',')
			j++;
		if (j > i) {
			t = find(v + i, j - i);
			if (t) {
				ok &= run_one(t);
			} else {
				printk(
				    "selftest %.*s: fail unknown test (selftest=list names them)\n",
				    (int)(j - i), v + i);
				nr_failed++;
				ok = false;
			}
		}
		i = j + 1;
	}
	return summary() && ok ? 0 : 1;
}
