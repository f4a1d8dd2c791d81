/* SPDX-License-Identifier: MIT */
/*
 * The control socket's protocol: QMP (QEMU Machine Protocol) compatible JSON over a Unix
 * socket, so that tools written for QEMU drive plugvm unchanged. The server speaks first
 * (greeting), each client negotiates with qmp_capabilities, then sends
 * {"execute": NAME, "arguments": {...}, "id": ANY} and gets {"return": ...} or
 * {"error": {"class": ..., "desc": ...}}, each carrying the request's id; events go to every
 * negotiated client. Protocol in docs/qmp.md.
 *
 * The server is single-threaded: the VM's main loop watches qmp_server_fd() and calls
 * qmp_server_dispatch(). Only qmp_server_event() may be called from other threads.
 * A session (one client's protocol state) works without a socket, for the unit tests.
 */
#ifndef PLUGVM_VMM_QMP_H
#define PLUGVM_VMM_QMP_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QMP_MAX_REQUEST (1u << 20) /* bytes of one unfinished request before the client goes */
#define QMP_MAX_OUTPUT	(8u << 20) /* unread replies and events before the client goes */
#define QMP_MAX_CLIENTS 256
/*
 * Fairness (docs/qmp.md): per qmp_server_dispatch(), each client gets at most one read of
 * QMP_PASS_BYTES and QMP_PASS_REQUESTS requests run; what is left waits for the next pass.
 * With the table full, a new client takes the place of the connection idle longest, once
 * that one has sent nothing for QMP_IDLE_EVICT_MS and waits for no reply.
 */
#define QMP_PASS_BYTES	  (16u << 10)
#define QMP_PASS_REQUESTS 8u
#define QMP_IDLE_EVICT_MS 1000u

/* A command's failure: QEMU's error classes ("GenericError", "CommandNotFound", ...). */
struct qmp_error {
	const char *class; /* NULL: no error */
	char desc[256];
};

void qmp_error_set(struct qmp_error *err, const char *class, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One argument a command accepts; the list ends with name == NULL. */
struct qmp_arg {
	const char *name;
	enum json_type type; /* json_type_null: any type */
	bool required;
};

/*
 * A command. `fn` gets the validated arguments (an object, maybe empty) and returns the
 * value of "return" (a new reference; NULL means {}), or sets err. `ctx` is the server's.
 * `flags` is 0 or QMP_CMD_NO_MACHINE. A command without that flag needs the guest machine:
 * while the server has none (qmp_server_set_no_machine()), dispatch refuses it with
 * GenericError before `fn` runs, so an entry that says nothing is safe
 * (test_control.c's test_every_command_without_machine).
 */
struct qmp_command {
	const char *name;
	struct json_object *(*fn)(void *ctx, struct json_object *args, struct qmp_error *err);
	const struct qmp_arg *args;
	unsigned flags;
};

#define QMP_CMD_NO_MACHINE (1u << 0) /* runs without a guest machine (QEMU's -machine none) */

struct qmp_server;
struct qmp_session;

/* qmp_capabilities, which every session answers itself (it is in no server's table). */
extern const struct qmp_command qmp_capabilities_command;

/*
 * A server for `cmds` (ending with name == NULL), passing `ctx` to them. `package` names
 * the software in the greeting beside version major.minor.micro. NULL without memory.
 */
struct qmp_server *qmp_server_create(const struct qmp_command *cmds, void *ctx, const char *package,
				     int major, int minor, int micro);

/*
 * Listen on the Unix socket `path` (mode 0600; a stale socket file is replaced, any other
 * file is not). Returns 0 or -errno (logged).
 */
int qmp_server_listen(struct qmp_server *s, const char *path);

/*
 * Serve on `fd`, an inherited socket already listening (libvirt's -chardev socket,fd=N,
 * plugvm's --qmp fd=N): accept() on it, remove nothing at exit. 0, or -ENOTSOCK if fd is
 * not a listening Unix socket, or -errno (logged).
 */
int qmp_server_listen_fd(struct qmp_server *s, int fd);

/* An fd that becomes readable when qmp_server_dispatch() has work (an epoll fd). */
int qmp_server_fd(const struct qmp_server *s);

/*
 * The fds the sandbox grants (sandbox.h): the eventfd any thread posting an event writes to,
 * and the socket's directory, where the main thread removes it at exit. -1 before
 * qmp_server_listen() succeeded.
 */
int qmp_server_event_fd(const struct qmp_server *s);
int qmp_server_dir_fd(const struct qmp_server *s);

/* The socket's path (NULL before qmp_server_listen() succeeded). */
const char *qmp_server_path(const struct qmp_server *s);
/* The table the server dispatches from (as given to qmp_server_create()). */
const struct qmp_command *qmp_server_commands(const struct qmp_server *s);

/*
 * No guest machine (`desc` not NULL, kept by reference): from now on every command without
 * QMP_CMD_NO_MACHINE fails with GenericError `desc`. NULL: every command runs (the default).
 */
void qmp_server_set_no_machine(struct qmp_server *s, const char *desc);

/*
 * The names of every event the server's user emits (ending with NULL, kept by reference):
 * query-qmp-schema lists them. An event not named there still goes out, and its name is
 * logged as an error once (the list is stale). NULL: no list (the default).
 */
void qmp_server_set_event_names(struct qmp_server *s, const char *const *names);

/* Accept clients, read requests, run commands, write replies and queued events. */
void qmp_server_dispatch(struct qmp_server *s);

/*
 * Queue event `name` with `data` (ownership taken; NULL: no data) for every negotiated
 * client, stamped now. Thread-safe; delivered by the next qmp_server_dispatch().
 */
void qmp_server_event(struct qmp_server *s, const char *name, struct json_object *data);

/* The same for the clients that subscribed to one of the `mask` bits (qmp_subscribe). */
void qmp_server_event_mask(struct qmp_server *s, uint32_t mask, const char *name,
			   struct json_object *data);

/*
 * The same for an event about `key` (a CPU slot; keys from qmp_server_set_event_keys() on
 * share the last one). Events a guest can trigger at will (qmp_events.c's event_limits, listed in
 * docs/qmp.md) are rate-limited per event name; over the limit, only the latest event of
 * each key is kept and goes out when the budget refills (qmp_server_tick()), as QEMU's
 * monitor throttles events per type and data key. Other events go out at once. Thread-safe.
 */
void qmp_server_event_key(struct qmp_server *s, uint32_t mask, const char *name, uint32_t key,
			  struct json_object *data);

/* Keys 0 .. nr_keys - 1 are told apart (default 1). Call before the first event. */
void qmp_server_set_event_keys(struct qmp_server *s, uint32_t nr_keys);

/*
 * Milliseconds until a throttled event may go out (-1: none waits). The main loop then
 * calls qmp_server_tick(), which queues them for the next qmp_server_dispatch().
 */
int qmp_server_next_timeout_ms(struct qmp_server *s);
void qmp_server_tick(struct qmp_server *s);

/*
 * Inside a command: answer it later. The command returns NULL without an error; its reply
 * (with the request's id) is written by qmp_deferred_return(), which must be called once
 * per handle, on the main thread; `ret` (ownership taken) or `err` is the answer. A client
 * that left meanwhile gets nothing. NULL outside a command or without memory.
 * qmp_deferred_return() may run inside any command (an agent request that fails at once):
 * it only queues the reply and wakes the dispatcher, which sends it and is the only one to
 * close sessions, so no session is freed under a caller still using it.
 */
struct qmp_deferred *qmp_defer(struct qmp_server *s);
void qmp_deferred_return(struct qmp_deferred *d, struct json_object *ret,
			 const struct qmp_error *err);

/* Inside a command: (un)subscribe its client to the optional events in `mask`. */
bool qmp_subscribe(struct qmp_server *s, uint32_t mask, bool on);

/* Deliver queued events and unsent replies, waiting at most `timeout_ms` for slow readers. */
void qmp_server_flush(struct qmp_server *s, int timeout_ms);

/* Number of connected clients. */
unsigned qmp_server_clients(const struct qmp_server *s);

/* Whether a connected client (not one already gone) subscribed to a bit of `mask`. */
bool qmp_server_subscribed(const struct qmp_server *s, uint32_t mask);

/* Close every client and the socket, remove the socket file, free s. NULL is fine. */
void qmp_server_destroy(struct qmp_server *s);

/* ---- one client's protocol, without I/O (the unit tests drive these) ---- */

/* A session of server s whose greeting is already in its output. NULL without memory. */
struct qmp_session *qmp_session_create(struct qmp_server *s);
void qmp_session_destroy(struct qmp_session *c);

/* Feed received bytes; replies (and errors) are appended to the output. */
void qmp_session_input(struct qmp_session *c, const char *buf, size_t len);

/*
 * The same, stopping once `*budget` requests (parse errors included) were handled; each
 * one handled is taken from *budget. Returns how many bytes of buf were used: the rest
 * is for a later call, in order.
 */
size_t qmp_session_input_some(struct qmp_session *c, const char *buf, size_t len, unsigned *budget);

/* The output not yet taken: a pointer to `*len` bytes, valid until the next call. */
const char *qmp_session_output(const struct qmp_session *c, size_t *len);
/* Drop the first `len` bytes of the output (they were sent). */
void qmp_session_consume(struct qmp_session *c, size_t len);

/*
 * The session must end (a request over QMP_MAX_REQUEST, output over QMP_MAX_OUTPUT, the
 * peer gone): it takes no more input; the dispatcher closes a socket client at the end of
 * its current qmp_server_dispatch().
 */
bool qmp_session_closing(const struct qmp_session *c);

/* o[key] = v, a uint64_t as a JSON integer (json-c's are signed: capped at INT64_MAX). */
static inline void qmp_add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key,
			       json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v));
}

#endif
