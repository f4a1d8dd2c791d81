/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/cpuhp_fakes.c: host fakes of every callback of the guest's cpuhp table
 * (guest/kernel/cpuhp_table.c), for programs that link the table with the engine.
 */
#ifndef PLUGVM_TESTS_CPUHP_FAKES_H
#define PLUGVM_TESTS_CPUHP_FAKES_H

#include <stdbool.h>

/*
 * Defined by the program: the table's callback of `state` ran for `cpu` (its startup if
 * `up`, else its teardown). Its result is the callback's (0 or -errno).
 */
int cpuhp_fake(unsigned int cpu, int state, bool up);

#endif
