/* SPDX-License-Identifier: MIT */
/*
 * One QMP connection of a client tool (plugctl, plugvm-latency): a raw line buffer over the
 * VM's Unix socket, requests matched to replies by id, events kept until someone waits for
 * them. Single-threaded. Every failure dies (print.h) with one of the statuses below.
 */
#ifndef PLUGVM_TOOLS_LIB_CONN_H
#define PLUGVM_TOOLS_LIB_CONN_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

/* The exit statuses of the client tools, and those the connection dies with. */
#define EXIT_NO	   1 /* the VM or the guest said no, or did not answer in time */
#define EXIT_USAGE 2 /* bad usage (and local failures: poll, out of memory) */
#define EXIT_CONN  3 /* no VM reached: no socket, nobody listening, not QMP, connection lost */

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
 * True when something accepts connections on the Unix socket `path` (a file left by a killed
 * VM refuses them; the file appears at bind(), before listen()). False for a path too long
 * for a socket address, and when no socket can be made.
 */
bool conn_listening(const char *path);

/*
 * $PLUGVM_QMP, else the only plugvm-*.qmp that someone listens on in $XDG_RUNTIME_DIR, or
 * /tmp without it (where plugvm puts them): sockets left by killed VMs are skipped. Dies
 * (EXIT_CONN) when there is none, (EXIT_USAGE) when there are several. The result is static.
 */
const char *conn_default_socket(void);

/*
 * Connect `c` (timeout_ms set by the caller) to the VM's socket at `path`, read the greeting
 * and negotiate capabilities. Dies with EXIT_USAGE for a path too long, EXIT_CONN when
 * nobody answers or the peer does not speak QMP, EXIT_NO when it refuses qmp_capabilities.
 */
void conn_open(struct conn *c, const char *path);
/* Close the socket, free the buffer and the events not waited for. */
void conn_close(struct conn *c);

/*
 * Send {"execute": name, "arguments": args (taken; NULL: none), "id": N} and return the
 * reply with that id (a new reference, "return" or "error" alike); events that arrive
 * first are kept for conn_wait_event(). Dies with EXIT_NO when no reply comes within
 * c->timeout_ms, EXIT_CONN when the connection is lost or the server sends a line that is
 * not a JSON object.
 */
struct json_object *conn_execute(struct conn *c, const char *name, struct json_object *args);
/*
 * conn_execute(), returning the reply's "return" value (a new reference). An "error" reply
 * is printed ("plugctl: NAME: DESC", the description made safe for a terminal) and exits
 * with EXIT_NO.
 */
struct json_object *conn_cmd(struct conn *c, const char *name, struct json_object *args);
/*
 * The first event `match(event, arg)` accepts, among those kept or the next to arrive,
 * removed from the kept ones (a new reference); NULL when none within c->timeout_ms.
 * Replies that arrive meanwhile are dropped. Dies as conn_execute() on a lost connection.
 */
struct json_object *conn_wait_event(struct conn *c, bool (*match)(struct json_object *, void *),
				    void *arg);
/* conn_wait_event() waiting until `until` (now_ms()'s clock) instead of c->timeout_ms. */
struct json_object *conn_poll_event(struct conn *c, bool (*match)(struct json_object *, void *),
				    void *arg, int64_t until);

#endif
