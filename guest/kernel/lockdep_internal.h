/* SPDX-License-Identifier: MIT */
/*
 * What the lock validator's two files share: lockdep.c (held-lock stacks, classes, the
 * dependency graph) and lockdep_report.c (printing what it finds). CONFIG_LOCKDEP only.
 */
#ifndef PLUGVM_KERNEL_LOCKDEP_INTERNAL_H
#define PLUGVM_KERNEL_LOCKDEP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/lockdep.h"

/* The validator's counters (lockdep_get_stats()), updated with relaxed atomics. */
extern struct lockdep_stats lockdep_counters;
#define stat_inc(field) __atomic_fetch_add(&lockdep_counters.field, 1, __ATOMIC_RELAXED)

static inline const char *map_name(const struct lockdep_map *map)
{
	return map->name ? map->name : "(unnamed)";
}

/* True the first time (type, site, class) is reported; later ones are counted only. */
bool lockdep_report_first(struct lockdep_task *t, enum lockdep_report_type type,
			  const struct lockdep_map *map, unsigned long ip);
/*
 * Print the report, then pass it to lockdep_report_hook. Never under the graph lock; the
 * task's own lockdep calls are ignored meanwhile (the console's locks, the hook's).
 */
void lockdep_deliver(struct lockdep_task *t, struct lockdep_report *r);
/* Print t's held locks as report lines. */
void lockdep_print_held(const struct lockdep_task *t);
/* Forget which reports were printed (lockdep_reset()). */
void lockdep_report_reset(void);

#endif
