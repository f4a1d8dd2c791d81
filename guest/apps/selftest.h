/* SPDX-License-Identifier: MIT */
/*
 * In-guest self-tests. Each test registers itself in the `selftests` linker section with
 * SELFTEST(name, fn); `selftest=a,b` or `selftest=all` on the command line runs them after
 * boot. Output, which tests outside the repo rely on:
 *   selftest NAME: pass
 *   selftest NAME: fail <reason>
 *   selftest NAME: key=value ...        (figures the test measured)
 */
#ifndef PLUGVM_APPS_SELFTEST_H
#define PLUGVM_APPS_SELFTEST_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/compiler.h"

struct selftest {
	const char *name;
	/*
	 * Returns 0 on success; on failure call selftest_fail() with the reason first. One
	 * function may serve several tests with an argument (SELFTEST_ARG): fn_arg(arg).
	 */
	int (*fn)(void);
	int (*fn_arg)(int arg);
	int arg;
	/* Only when named: it changes the machine (e.g. ejects a CPU), so not in `all`. */
	bool explicit_only;
};

#define SELFTEST_ENTRY(id, ...)         \
	static const struct selftest id \
	    __attribute__((used, section("selftests"), aligned(8))) = { __VA_ARGS__ }
#define SELFTEST(nm, f) SELFTEST_ENTRY(__selftest_##f, .name = nm, .fn = f)
#define SELFTEST_EXPLICIT(nm, f) \
	SELFTEST_ENTRY(__selftest_##f, .name = nm, .fn = f, .explicit_only = true)
/* `a`, an integer literal, also names the entry: one per (f, a). */
#define SELFTEST_ARG(nm, f, a) \
	SELFTEST_ENTRY(__selftest_##f##_##a, .name = nm, .fn_arg = f, .arg = a)

/* Record why the running test failed (the first reason is kept). Returns -1. */
int selftest_fail(const char *fmt, ...) __printf(1, 2);
/* Print a figures line "selftest NAME: ..." for the running test. */
void selftest_report(const char *fmt, ...) __printf(1, 2);

/* The highest-numbered online CPU other than `except`; `except` itself when it is alone. */
unsigned selftest_other_cpu(unsigned except);

/*
 * The self-tests' interrupt: selftest_irq_set(fn, arg) makes its vector call fn(arg)
 * (interrupts off; NULL: nothing), selftest_irq_raise() sends it to the running CPU (a
 * self-IPI: an interrupt at a chosen point of a thread).
 */
void selftest_irq_set(void (*fn)(void *), void *arg);
void selftest_irq_raise(void);

/*
 * The pseudo-random numbers of the self-tests (and of apps/workload.c): xorshift32, the
 * same sequence for the same seed; a zero state is replaced by a fixed non-zero one.
 */
static inline uint32_t selftest_rand(uint32_t *state)
{
	uint32_t x = *state ? *state : 0x9e3779b9u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

/*
 * Run what `selftest=` asks for. Returns -1 if nothing was asked, 0 if every test passed,
 * 1 otherwise (unknown names fail).
 */
int selftest_run_cmdline(void);

#endif
