/* SPDX-License-Identifier: MIT */
/*
 * Kernel bug reports. pr_bug() prints one line "BUG: ..." and counts it; the test harness
 * and the self-test summary fail on any. A self-test that provokes a report on purpose
 * wraps the provocation in bug_expect(true) / bug_expect(false): reports the running thread
 * makes meanwhile say "expected BUG: ..." (and the validator's "expected lockdep: ...") and
 * are counted apart.
 */
#ifndef PLUGVM_KERNEL_BUG_H
#define PLUGVM_KERNEL_BUG_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/compiler.h"

/* Print "BUG: <message>" (or "expected BUG: ...") as one line. Any context. */
void pr_bug(const char *fmt, ...) __printf(1, 2);
/*
 * The same for a report made on behalf of another thread (a hung one, the one running on a
 * locked-up CPU): expected if that thread (`subject_expects`) or the caller expects it.
 */
void pr_bug_for(bool subject_expects, const char *fmt, ...) __printf(2, 3);
/* The running thread provokes reports on purpose (true) or no longer (false). Thread context. */
void bug_expect(bool on);
/* Unexpected and expected reports since boot. */
uint64_t bug_count(void);
uint64_t bug_expected_count(void);

#endif
