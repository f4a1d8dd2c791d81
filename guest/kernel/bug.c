// SPDX-License-Identifier: MIT
/* Kernel bug reports, counted, with the expected ones of self-tests told apart (bug.h). */
#include "kernel/bug.h"

#include <stdarg.h>

#include "kernel/printk.h"
#include "kernel/sched.h"

static uint64_t nr_unexpected, nr_expected;

static void report(bool exp, const char *fmt, va_list ap)
{
	char line[256];

	vsnprintf(line, sizeof(line), fmt, ap);
	__atomic_add_fetch(exp ? &nr_expected : &nr_unexpected, 1, __ATOMIC_RELAXED);
	printk("%sBUG: %s", exp ? "expected " : "", line);
}

void pr_bug(const char *fmt, ...)
{
	struct thread *t = current_thread();
	va_list ap;

	va_start(ap, fmt);
	report(t && t->bug_expected, fmt, ap);
	va_end(ap);
}

void pr_bug_for(bool subject_expects, const char *fmt, ...)
{
	struct thread *t = current_thread();
	va_list ap;

	va_start(ap, fmt);
	report(subject_expects || (t && t->bug_expected), fmt, ap);
	va_end(ap);
}

void bug_expect(bool on)
{
	struct thread *t = current_thread();

	t->bug_expected = on;
#ifdef CONFIG_LOCKDEP
	t->lockdep.expected = on;
#endif
}

uint64_t bug_count(void)
{
	return __atomic_load_n(&nr_unexpected, __ATOMIC_RELAXED);
}

uint64_t bug_expected_count(void)
{
	return __atomic_load_n(&nr_expected, __ATOMIC_RELAXED);
}
