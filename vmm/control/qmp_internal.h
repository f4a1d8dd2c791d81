/* SPDX-License-Identifier: MIT */
/*
 * The QMP server's insides, shared by its three files and nothing else: qmp_session.c (one
 * client's protocol: parsing, negotiation, dispatch, replies, deferred replies),
 * qmp_events.c (the event queue and the throttling of guest-triggered events) and
 * qmp_server.c (sockets, clients, limits, the main loop's glue).
 */
#ifndef PLUGVM_VMM_CONTROL_QMP_INTERNAL_H
#define PLUGVM_VMM_CONTROL_QMP_INTERNAL_H

#include <pthread.h>

#include "../log.h"
#include "qmp.h"

struct qmp_session {
	struct qmp_server *s;
	json_tokener *tok;
	size_t pending; /* bytes of the unfinished request */
	bool skip_line; /* after a parse error: drop input up to the next newline */
	bool negotiated;
	bool closing; /* ends: no more input taken; the dispatcher closes it (reap()) */
	bool gone; /* closing, and its output is dropped: peer gone or over QMP_MAX_OUTPUT */
	bool input_ended; /* the peer shut down its side: answer what it sent, then close */
	unsigned nr_deferred; /* its commands whose replies are still to come */
	char *out;
	size_t out_len, out_cap;
	int fd; /* -1: no socket (unit tests) */
	uint32_t epoll_events; /* what epoll watches for it now */
	/* Received, not parsed yet (its pass's budget ran out): at most QMP_PASS_BYTES. */
	char *in;
	size_t in_off, in_len;
	uint64_t active_ns; /* when it connected or last sent a byte, CLOCK_MONOTONIC */
	uint64_t served_pass; /* the dispatcher's pass that last gave it its share */
	uint32_t subscribed; /* optional events asked for (qmp_subscribe) */
	uint64_t serial; /* names the session for deferred replies */
	struct qmp_session *next;
	struct qmp_session *all_next; /* every session, with or without a socket */
};

/* An event, formatted once, waiting for the dispatcher to copy it to the sessions. */
struct qmp_event {
	char *line;
	uint32_t mask; /* 0: for everyone; else for sessions subscribed to one of these */
	struct qmp_event *next;
};

/* Events with a rate limit (qmp_events.c's event_limits[]). */
#define QMP_NR_EVENT_LIMITS 5

/* One throttled event's state (a GCRA: `tat` is when the budget is whole again). */
struct event_throttle {
	uint64_t tat_ns; /* theoretical arrival time, CLOCK_MONOTONIC */
	struct qmp_event **pending; /* per key, the latest event waiting; NULL: none */
	unsigned nr_pending, cursor;
	uint64_t coalesced; /* events replaced by a later one of their key */
	struct log_ratelimit rl;
};

struct qmp_server {
	/* Main thread only: */
	const struct qmp_command *cmds;
	void *ctx;
	char *greeting;
	int listen_fd, epoll_fd, event_fd;
	char *path;
	int dir_fd; /* path's directory (O_PATH): the socket is removed as a name in it */
	const char *name; /* path's last component, in path */
	struct qmp_session *clients; /* the sessions with a socket (next list) */
	unsigned nr_clients;
	uint64_t pass; /* qmp_server_dispatch() calls so far */
	struct qmp_session *sessions; /* every session (all_next list) */
	uint64_t next_serial;
	struct qmp_session *current; /* the session whose command runs now */
	struct json_object *current_id;
	bool deferred; /* that command took a deferred reply */
	const char *no_machine; /* not NULL: machine commands fail with this (-machine none) */
	const char *const *event_names; /* every event emitted (NULL: not declared) */

	pthread_mutex_t ev_lock;
	/* Guarded by ev_lock (events come from any thread): */
	struct qmp_event *ev_head, **ev_tail;
	struct event_throttle throttle[QMP_NR_EVENT_LIMITS];
	uint32_t nr_event_keys; /* keys beyond fold into the last one */
	struct log_ratelimit undeclared_rl; /* an event missing from event_names (own lock) */
};

/* ---- qmp_session.c ---- */

/*
 * Append one line (CRLF added) to the session's output; a session over QMP_MAX_OUTPUT is
 * dropped instead. Main thread.
 */
void qmp_session_append(struct qmp_session *c, const char *text, size_t len);
/*
 * The session ends without another byte: what it queued is dropped. Only marks it; the
 * dispatcher closes it (qmp_server.c's reap()), never a caller still inside the session.
 */
void qmp_session_drop(struct qmp_session *c);
/*
 * The peer sent its last byte (a half-close, as `socat` or a shell pipe does): what it sent
 * is still answered, deferred replies and the events until then included; the session is
 * done once nothing is left to send (qmp_session_done()).
 */
void qmp_session_end_input(struct qmp_session *c);
/* An ended input whose every reply went out: the dispatcher may close it. */
bool qmp_session_done(const struct qmp_session *c);

/* ---- qmp_events.c ---- */

/* CLOCK_MONOTONIC in nanoseconds. Any thread. */
uint64_t qmp_mono_ns(void);
/* Take every queued event, oldest first (the caller frees them). Any thread. */
struct qmp_event *qmp_events_take(struct qmp_server *s);
/* Free the queued and the throttled events. */
void qmp_events_free(struct qmp_server *s);

/* ---- qmp_server.c ---- */

/* Make the dispatcher deliver queued events and flush every client. Any thread. */
void qmp_server_wake(struct qmp_server *s);

#endif
