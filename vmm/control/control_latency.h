/* SPDX-License-Identifier: MIT */
/*
 * The control socket's latency command (control_latency.c): query-latency copies the
 * guest's live measurement (devices/latency.h) into QMP; docs/qmp.md has the shape.
 */
#ifndef PLUGVM_VMM_CONTROL_LATENCY_H
#define PLUGVM_VMM_CONTROL_LATENCY_H

#include "qmp.h"

extern const struct qmp_command control_latency_commands[];

#endif
