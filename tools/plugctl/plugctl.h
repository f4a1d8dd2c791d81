/* SPDX-License-Identifier: MIT */
/*
 * plugctl's parts: its commands (cmd_cpus.c, cmd_cpuhp.c, cmd_stats.c, cmd_virsh.c,
 * cmd_latency.c) and the table that names them (main.c), over the client library's QMP
 * connection and printing (tools/lib/). Exit status 0 done, 1 the VM or the guest said no,
 * 2 bad usage, 3 no VM reached (no socket, nobody listening, not QMP, the connection lost).
 */
#ifndef PLUGVM_TOOLS_PLUGCTL_H
#define PLUGVM_TOOLS_PLUGCTL_H

#include <stdbool.h>

#include "tools/lib/conn.h"
#include "tools/lib/events.h"
#include "tools/lib/json_get.h"
#include "tools/lib/print.h"

/* --json: print QMP values instead of tables and sentences. */
extern bool json_out;

/* A number argument (>= 0) of what `what` names, or die with EXIT_USAGE. */
long parse_num(const char *s, const char *what);

/* ---- the commands: each gets its arguments (checked in number), returns the exit status */

int cmd_cpus(struct conn *c, char **argv);
int cmd_latency(struct conn *c, char **argv);
int cmd_cpu_add(struct conn *c, char **argv);
int cmd_cpu_del(struct conn *c, char **argv);
int cmd_cpu_set(struct conn *c, char **argv);
int cmd_states(struct conn *c, char **argv);
int cmd_cpuhp(struct conn *c, char **argv);
int cmd_target(struct conn *c, char **argv);
/* cmd_stats.c */
int cmd_stats(struct conn *c, char **argv);
int cmd_fail(struct conn *c, char **argv);
int cmd_timers(struct conn *c, char **argv);
int cmd_sched(struct conn *c, char **argv);
int cmd_setvcpus(struct conn *c, char **argv);
int cmd_vcpucount(struct conn *c, char **argv);
int cmd_dumpxml(struct conn *c, char **argv);

#endif
