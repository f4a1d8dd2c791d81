/* SPDX-License-Identifier: MIT */
/*
 * plugctl's parts: the QMP connection (conn.c), what it prints (print.c), its commands
 * (cmd_cpus.c, cmd_cpuhp.c, cmd_stats.c, cmd_virsh.c) and the table that names them
 * (main.c). Exit status 0 done, 1 the VM or the guest said no, 2 bad usage, 3 no VM reached
 * (no socket, nobody listening, not QMP, the connection lost).
 */
#ifndef PLUGVM_TOOLS_PLUGCTL_H
#define PLUGVM_TOOLS_PLUGCTL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#define EXIT_NO	   1
#define EXIT_USAGE 2
#define EXIT_CONN  3

/* --json: print QMP values instead of tables and sentences. */
extern bool json_out;

/* "plugctl: " (prog_name) and the message on stderr, then exit(status). */
void die(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
/* The name die() puts first: each program that links conn.c and print.c defines it. */
extern const char prog_name[];

/* A number argument (>= 0) of what `what` names, or die with EXIT_USAGE. */
long parse_num(const char *s, const char *what);

/* ---- conn.c: one QMP connection ---------------------------------------------------------- */

struct conn {
	int fd;
	char *buf;
	size_t len, cap;
	unsigned next_id;
	struct json_object *events; /* array of events seen while waiting for replies */
	int timeout_ms; /* how long to wait for the VM or the guest */
};

/* CLOCK_MONOTONIC in ms. */
int64_t now_ms(void);

/*
 * $PLUGVM_QMP, else the only plugvm-*.qmp that someone listens on in $XDG_RUNTIME_DIR, or
 * /tmp without it (where plugvm puts them): sockets left by killed VMs are skipped. Dies (EXIT_CONN) when there is none,
 * (EXIT_USAGE) when there are several.
 */
const char *conn_default_socket(void);
/* Connect to the VM's socket at `path` and negotiate capabilities; dies on failure. */
void conn_open(struct conn *c, const char *path);
void conn_close(struct conn *c);

/* Send {"execute": name, "arguments": args (taken), "id": N}; the reply (events kept). */
struct json_object *conn_execute(struct conn *c, const char *name, struct json_object *args);
/* The same, returning the "return" value (a new reference), or exiting with the error. */
struct json_object *conn_cmd(struct conn *c, const char *name, struct json_object *args);
/* An event `match` accepts (taken from those seen, or the next ones); NULL on timeout. */
struct json_object *conn_wait_event(struct conn *c, bool (*match)(struct json_object *, void *),
				    void *arg);

/* ---- print.c: what plugctl shows ------------------------------------------------------- */

/*
 * A string from the server as text for a terminal: what is not printable UTF-8 is shown as
 * \xNN. The result lives until 8 more calls; NULL gives "(null)".
 */
const char *tty(const char *s);
/* A QMP value as JSON on stdout, nothing in it a terminal acts on. */
void print_json(struct json_object *o);
/*
 * o[a] (or o[a][b]) as a string (NULL: absent), an int (-1: absent); o[k] as an int64 (0:
 * absent), a boolean (false: absent).
 */
const char *get_str(struct json_object *o, const char *a, const char *b);
int get_int(struct json_object *o, const char *a, const char *b);
int64_t get_i64(struct json_object *o, const char *k);
bool get_bool(struct json_object *o, const char *k);

/* ---- the commands: each gets its arguments (checked in number), returns the exit status */

/* conn_wait_event() matchers: the guest's _OST for an insert into slot `arg` (a decimal
 * string); the end of a removal (done or refused) of the CPU whose QOM path is `arg`. */
bool match_ost(struct json_object *e, void *arg);
bool match_removed(struct json_object *e, void *arg);

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
