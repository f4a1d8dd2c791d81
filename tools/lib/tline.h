/* SPDX-License-Identifier: MIT */
/*
 * cyclictest's per-thread summary line, from one entry of QMP query-latency's "cpus": shared
 * by plugvm-latency and `plugctl latency`.
 */
#ifndef PLUGVM_TOOLS_LIB_TLINE_H
#define PLUGVM_TOOLS_LIB_TLINE_H

#include <json-c/json.h>
#include <stdio.h>

/*
 * Print `T: N (TID) P:PRIO I:INTERVAL C:COUNT Min: Act: Avg: Max:` (microseconds, the widths
 * rt-tests' cyclictest uses) for `cpu` to `f`; `tid` is the host thread of its vCPU (0 when
 * none). Returns what fprintf returns.
 */
int latency_tline(FILE *f, struct json_object *cpu, int tid, long interval_us);

#endif
