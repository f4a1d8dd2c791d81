/* SPDX-License-Identifier: MIT */
/*
 * The control socket's statistics commands (control_stats.c): query-stats and
 * query-stats-schemas, provider "kvm". control.c merges them into its command table.
 */
#ifndef PLUGVM_VMM_CONTROL_STATS_H
#define PLUGVM_VMM_CONTROL_STATS_H

#include "qmp.h"

struct vm;

/* Ends with name == NULL; ctx is the struct vm. */
extern const struct qmp_command control_stats_commands[];

#endif
