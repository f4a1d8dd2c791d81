/* SPDX-License-Identifier: MIT */
/*
 * The control socket's statistics commands (control_stats.c): query-stats and
 * query-stats-schemas, provider "kvm". control.c merges them into its command table.
 */
#ifndef PLUGVM_VMM_CONTROL_STATS_H
#define PLUGVM_VMM_CONTROL_STATS_H

#include <stddef.h>

#include "qmp.h"

struct vm;

/* Ends with name == NULL; ctx is the struct vm. */
extern const struct qmp_command control_stats_commands[];

/* The QOM path of the CPU in `slot`, as query-cpus-fast shows it. Main thread. */
void control_cpu_path(struct vm *vm, unsigned slot, char *buf, size_t len);

#endif
