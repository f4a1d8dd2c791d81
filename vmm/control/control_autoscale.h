/* SPDX-License-Identifier: MIT */
/*
 * The control socket's autoscaling commands and event (control_autoscale.c): autoscale-set,
 * query-autoscale, autoscale-off, and PLUGVM_AUTOSCALE for every decision and outcome
 * (autoscale.h); docs/autoscale.md has the shapes.
 */
#ifndef PLUGVM_VMM_CONTROL_AUTOSCALE_H
#define PLUGVM_VMM_CONTROL_AUTOSCALE_H

#include "qmp.h"

struct vm;

extern const struct qmp_command control_autoscale_commands[];

/* Hear the autoscaler's events (as QMP events while a socket exists, else log lines). */
void control_autoscale_start(struct vm *vm);

#endif
