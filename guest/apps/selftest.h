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

#include "kernel/compiler.h"

struct selftest {
	const char *name;
	/* Returns 0 on success; on failure call selftest_fail() with the reason first. */
	int (*fn)(void);
	/* Only when named: it changes the machine (e.g. ejects a CPU), so not in `all`. */
	bool explicit_only;
};

#define SELFTEST(nm, f)                             \
	static const struct selftest __selftest_##f \
	    __attribute__((used, section("selftests"), aligned(8))) = { nm, f, false }
#define SELFTEST_EXPLICIT(nm, f)                    \
	static const struct selftest __selftest_##f \
	    __attribute__((used, section("selftests"), aligned(8))) = { nm, f, true }

/* Record why the running test failed (the first reason is kept). Returns -1. */
int selftest_fail(const char *fmt, ...) __printf(1, 2);
/* Print a figures line "selftest NAME: ..." for the running test. */
void selftest_report(const char *fmt, ...) __printf(1, 2);

/*
 * Run what `selftest=` asks for. Returns -1 if nothing was asked, 0 if every test passed,
 * 1 otherwise (unknown names fail).
 */
int selftest_run_cmdline(void);

#endif
