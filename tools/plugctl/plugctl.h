/* SPDX-License-Identifier: MIT */
/*
 * plugctl's parts: its commands (cmd_cpus.c, cmd_cpuhp.c, cmd_stats.c, cmd_virsh.c,
 * cmd_latency.c, cmd_autoscale.c) and the table that names them (main.c), over the client library's QMP
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
/* cmd_autoscale.c: vCPUs on demand */
int cmd_autoscale(struct conn *c, char **argv);
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
/* cmd_virsh.c: virsh's words, with virsh's flags */
#define VIRSH_LIVE	   0x01u
#define VIRSH_CONFIG	   0x02u
#define VIRSH_CURRENT	   0x04u
#define VIRSH_MAXIMUM	   0x08u
#define VIRSH_ACTIVE	   0x10u
#define VIRSH_GUEST	   0x20u
#define VIRSH_HOTPLUGGABLE 0x40u
/*
 * Split `verb`'s arguments into virsh flags (returned, VIRSH_*) and at most `max_pos`
 * positional ones (pos[], NULL-terminated: room for max_pos + 1). Dies with EXIT_USAGE, in
 * virsh's words, on a flag not in `allowed`, too many positional arguments, or flags virsh
 * takes only one of (--current with --live or --config, --active with --maximum).
 */
unsigned virsh_flags(const char *verb, char **argv, unsigned allowed, char **pos, int max_pos);
/* Die with EXIT_NO, in libvirt's words, for --config (no persistent config) and --guest. */
void virsh_refuse_unsupported(unsigned flags);
int cmd_setvcpus(struct conn *c, char **argv);
int cmd_vcpucount(struct conn *c, char **argv);
int cmd_dumpxml(struct conn *c, char **argv);
/* cmd_vcpus.c: the vCPU threads on this host */
/* Each present vCPU's host thread, indexed by cpu-index (0: absent); returns 1 + the highest. */
size_t vcpu_threads(struct conn *c, int *tids, size_t max);
/* The process (thread group) of host thread `tid`; dies (EXIT_NO) when /proc cannot tell. */
int proc_tgid(int tid);
/*
 * User plus system clock ticks of thread `tid` of process `tgid` (tid 0: the whole process)
 * and, with `cpu`, the host CPU it last ran on; dies (EXIT_NO) when /proc cannot tell.
 */
void proc_stat(int tgid, int tid, unsigned long long *ticks, int *cpu);
double ticks_to_s(unsigned long long ticks);
int cmd_vcpuinfo(struct conn *c, char **argv);
int cmd_vcpupin(struct conn *c, char **argv);
/* cmd_domain.c: the lifecycle verbs and the domain's state */
int cmd_shutdown(struct conn *c, char **argv);
int cmd_destroy(struct conn *c, char **argv);
int cmd_reboot(struct conn *c, char **argv);
int cmd_suspend(struct conn *c, char **argv);
int cmd_resume(struct conn *c, char **argv);
int cmd_dominfo(struct conn *c, char **argv);
int cmd_domstate(struct conn *c, char **argv);

#endif
