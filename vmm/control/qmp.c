// SPDX-License-Identifier: MIT
/* QMP-compatible control socket: sessions (protocol, no I/O) and the server (sockets, epoll). */
#include "qmp.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../log.h"

/*
 * gcc 12's -fanalyzer loses a session's output buffer once the session is reached through
 * the server's client list and epoll's data pointer, and reports the buffer as leaked. The
 * ASan run of the integration tests (make check) checks these paths for real leaks.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif

#define TOKENER_DEPTH 32 /* QEMU's parser allows 1024; nothing here nests past 4 */
#define READ_CHUNK    65536
#define READ_BUDGET   (4 * READ_CHUNK) /* per client per dispatch: others get their turn */

struct qmp_session {
	struct qmp_server *s;
	json_tokener *tok;
	size_t pending; /* bytes of the unfinished request */
	bool skip_line; /* after a parse error: drop input up to the next newline */
	bool negotiated;
	bool closing; /* ends: no more input taken; the dispatcher closes it (reap()) */
	bool gone; /* closing, and its output is dropped: peer gone or over QMP_MAX_OUTPUT */
	char *out;
	size_t out_len, out_cap;
	int fd; /* -1: no socket (unit tests) */
	bool want_out; /* EPOLLOUT is armed */
	uint32_t subscribed; /* optional events asked for (qmp_subscribe) */
	uint64_t serial; /* names the session for deferred replies */
	struct qmp_session *next;
	struct qmp_session *all_next; /* every session, with or without a socket */
};

struct qmp_deferred {
	struct qmp_server *s;
	uint64_t serial;
	struct json_object *id;
};

struct qmp_event {
	char *line;
	uint32_t mask; /* 0: for everyone; else for sessions subscribed to one of these */
	struct qmp_event *next;
};

/*
 * Events a guest can trigger at will, and how many of each go out: `burst` at once, then
 * `per_sec` a second on average (all keys of the event together). Over that, as QEMU's
 * monitor throttles its events, the latest event of each key (a CPU slot) waits and goes
 * out as the budget refills; the ones it replaced are lost. docs/qmp.md lists these.
 */
static const struct event_limit {
	const char *name;
	unsigned burst, per_sec;
} event_limits[] = {
	{ "ACPI_DEVICE_OST", 256, 256 },     { "PLUGVM_CPU_ONLINE", 256, 256 },
	{ "PLUGVM_CPU_OFFLINE", 256, 256 },  { "CPUHP_STATE", 1024, 1000 },
	{ "GUEST_LOCKDEP_WARNING", 32, 10 },
};
#define NR_EVENT_LIMITS (sizeof(event_limits) / sizeof(event_limits[0]))

/* One throttled event's state (a GCRA: `tat` is when the budget is whole again). */
struct event_throttle {
	uint64_t tat_ns; /* theoretical arrival time, CLOCK_MONOTONIC */
	struct qmp_event **pending; /* per key, the latest event waiting; NULL: none */
	unsigned nr_pending, cursor;
	uint64_t coalesced; /* events replaced by a later one of their key */
	struct log_ratelimit rl;
};

struct qmp_server {
	const struct qmp_command *cmds;
	void *ctx;
	char *greeting;
	int listen_fd, epoll_fd, event_fd;
	char *path;
	struct qmp_session *clients;
	unsigned nr_clients;
	pthread_mutex_t ev_lock;
	/* Guarded by ev_lock: */
	struct qmp_event *ev_head, **ev_tail;
	struct event_throttle throttle[NR_EVENT_LIMITS];
	uint32_t nr_event_keys; /* keys beyond fold into the last one */
	struct qmp_session *sessions; /* all_next list */
	uint64_t next_serial;
	struct qmp_session *current; /* the session whose command runs now */
	struct json_object *current_id;
	bool deferred; /* that command took a deferred reply */
};

void qmp_error_set(struct qmp_error *err, const char *class, const char *fmt, ...)
{
	va_list ap;

	err->class = class;
	va_start(ap, fmt);
	vsnprintf(err->desc, sizeof(err->desc), fmt, ap);
	va_end(ap);
}

/* ---- output ---------------------------------------------------------------------------- */

/* Room for `need` bytes of output. */
static bool out_reserve(struct qmp_session *c, size_t need)
{
	size_t cap = c->out_cap ? c->out_cap : 4096;
	char *p;

	if (c->out && need <= c->out_cap)
		return true;
	while (cap < need)
		cap *= 2;
	p = realloc(c->out, cap);
	if (!p)
		return false;
	c->out = p;
	c->out_cap = cap;
	return true;
}

/*
 * The session ends without another byte: what it has queued is dropped. Only marks it;
 * the dispatcher closes the socket and frees the session (reap()), never a caller that
 * may still be inside the session (a command, the tokener, client_read()).
 */
static void session_drop(struct qmp_session *c)
{
	c->closing = true;
	c->gone = true;
	c->out_len = 0;
}

static void out_append(struct qmp_session *c, const char *text, size_t len)
{
	if (c->closing)
		return;
	if (c->out_len + len + 2 > QMP_MAX_OUTPUT) {
		/* A client that reads nothing does not get to hold the VMM's memory. */
		log_warn("qmp: client not reading its replies (%zu bytes queued): dropping it",
			 c->out_len);
		session_drop(c);
		return;
	}
	if (!out_reserve(c, c->out_len + len + 2)) {
		session_drop(c);
		return;
	}
	memcpy(&c->out[c->out_len], text, len);
	c->out[c->out_len + len] = '\r';
	c->out[c->out_len + len + 1] = '\n';
	c->out_len += len + 2;
}

static void out_json(struct qmp_session *c, struct json_object *o)
{
	size_t len;
	const char *text = json_object_to_json_string_length(
	    o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);

	out_append(c, text, len);
}

static void reply_error(struct qmp_session *c, struct json_object *id, const char *class,
			const char *desc)
{
	struct json_object *r = json_object_new_object(), *e = json_object_new_object();

	json_object_object_add(e, "class", json_object_new_string(class));
	json_object_object_add(e, "desc", json_object_new_string(desc));
	json_object_object_add(r, "error", e);
	if (id)
		json_object_object_add(r, "id", json_object_get(id));
	out_json(c, r);
	json_object_put(r);
}

const char *qmp_session_output(const struct qmp_session *c, size_t *len)
{
	*len = c->out_len;
	return c->out;
}

void qmp_session_consume(struct qmp_session *c, size_t len)
{
	if (len > c->out_len)
		len = c->out_len;
	memmove(c->out, c->out + len, c->out_len - len);
	c->out_len -= len;
}

bool qmp_session_closing(const struct qmp_session *c)
{
	return c->closing;
}

/* ---- requests -------------------------------------------------------------------------- */

static const char *type_name(enum json_type t)
{
	switch (t) {
	case json_type_boolean:
		return "boolean";
	case json_type_int:
		return "integer";
	case json_type_double:
		return "number";
	case json_type_string:
		return "string";
	case json_type_object:
		return "object";
	case json_type_array:
		return "array";
	default:
		return "null";
	}
}

/* Arguments against the command's list: nothing unknown, right types, nothing missing. */
static bool check_args(const struct qmp_command *cmd, struct json_object *args,
		       struct qmp_error *err)
{
	const struct qmp_arg *a;

	json_object_object_foreach(args, key, val)
	{
		for (a = cmd->args; a && a->name; a++)
			if (!strcmp(a->name, key))
				break;
		if (!a || !a->name) {
			qmp_error_set(err, "GenericError", "Parameter '%.64s' is unexpected", key);
			return false;
		}
		if (a->type != json_type_null && !json_object_is_type(val, a->type)) {
			qmp_error_set(err, "GenericError",
				      "Invalid parameter type for '%s', expected: %s", a->name,
				      type_name(a->type));
			return false;
		}
	}
	for (a = cmd->args; a && a->name; a++) {
		if (a->required && !json_object_object_get_ex(args, a->name, NULL)) {
			qmp_error_set(err, "GenericError", "Parameter '%s' is missing", a->name);
			return false;
		}
	}
	return true;
}

static const struct qmp_arg capabilities_args[] = {
	{ "enable", json_type_array, false },
	{ NULL, json_type_null, false },
};

/* qmp_capabilities: plugvm offers no optional capability (no out-of-band execution). */
static struct json_object *do_capabilities(struct qmp_session *c, struct json_object *args,
					   struct qmp_error *err)
{
	struct json_object *enable;
	size_t i;

	if (json_object_object_get_ex(args, "enable", &enable)) {
		for (i = 0; i < json_object_array_length(enable); i++) {
			struct json_object *cap = json_object_array_get_idx(enable, i);

			qmp_error_set(err, "GenericError", "Capability '%.64s' not available",
				      json_object_is_type(cap, json_type_string)
					  ? json_object_get_string(cap)
					  : "?");
			return NULL;
		}
	}
	c->negotiated = true;
	return NULL;
}

static void handle(struct qmp_session *c, struct json_object *req)
{
	static const struct qmp_command capabilities = { "qmp_capabilities", NULL,
							 capabilities_args };
	struct json_object *id = NULL, *exec = NULL, *args = NULL, *ret, *reply, *empty = NULL;
	const struct qmp_command *cmd;
	struct qmp_error err = { 0 };
	const char *name;

	if (!json_object_is_type(req, json_type_object)) {
		reply_error(c, NULL, "GenericError", "QMP input must be a JSON object");
		return;
	}
	json_object_object_get_ex(req, "id", &id);
	json_object_object_foreach(req, key, val)
	{
		(void)val;
		if (strcmp(key, "execute") && strcmp(key, "arguments") && strcmp(key, "id")) {
			char desc[128];

			snprintf(desc, sizeof(desc), "QMP input member '%.64s' is unexpected", key);
			reply_error(c, id, "GenericError", desc);
			return;
		}
	}
	if (!json_object_object_get_ex(req, "execute", &exec)) {
		reply_error(c, id, "GenericError", "QMP input lacks member 'execute'");
		return;
	}
	if (!json_object_is_type(exec, json_type_string)) {
		reply_error(c, id, "GenericError", "QMP input member 'execute' must be a string");
		return;
	}
	if (json_object_object_get_ex(req, "arguments", &args) &&
	    !json_object_is_type(args, json_type_object)) {
		reply_error(c, id, "GenericError",
			    "QMP input member 'arguments' must be an object");
		return;
	}
	name = json_object_get_string(exec);
	if (!c->negotiated && strcmp(name, "qmp_capabilities")) {
		reply_error(c, id, "CommandNotFound",
			    "Expecting capabilities negotiation with 'qmp_capabilities'");
		return;
	}
	if (!strcmp(name, "qmp_capabilities")) {
		if (c->negotiated) {
			reply_error(
			    c, id, "CommandNotFound",
			    "Capabilities negotiation is already complete, command ignored");
			return;
		}
		cmd = &capabilities;
	} else {
		for (cmd = c->s->cmds; cmd->name; cmd++)
			if (!strcmp(cmd->name, name))
				break;
		if (!cmd->name) {
			char desc[160];

			snprintf(desc, sizeof(desc), "The command %.100s has not been found", name);
			reply_error(c, id, "CommandNotFound", desc);
			return;
		}
	}
	if (!args)
		args = empty = json_object_new_object();
	if (!check_args(cmd, args, &err))
		ret = NULL;
	else if (cmd == &capabilities)
		ret = do_capabilities(c, args, &err);
	else {
		c->s->current = c;
		c->s->current_id = id;
		c->s->deferred = false;
		ret = cmd->fn(c->s->ctx, args, &err);
		c->s->current = NULL;
		c->s->current_id = NULL;
		if (c->s->deferred && !err.class) {
			/* Answered later by qmp_deferred_return(). */
			json_object_put(ret);
			json_object_put(empty);
			return;
		}
	}
	json_object_put(empty);
	if (err.class) {
		json_object_put(ret);
		reply_error(c, id, err.class, err.desc);
		return;
	}
	reply = json_object_new_object();
	json_object_object_add(reply, "return", ret ? ret : json_object_new_object());
	if (id)
		json_object_object_add(reply, "id", json_object_get(id));
	out_json(c, reply);
	json_object_put(reply);
}

void qmp_session_input(struct qmp_session *c, const char *buf, size_t len)
{
	size_t off = 0;

	while (off < len && !c->closing) {
		struct json_object *obj;
		enum json_tokener_error jerr;
		size_t chunk = len - off, used;

		if (c->skip_line) {
			const char *nl = memchr(buf + off, '\n', len - off);

			if (!nl)
				return;
			off = (size_t)(nl - buf) + 1;
			c->skip_line = false;
			continue;
		}
		if (chunk > INT_MAX)
			chunk = INT_MAX;
		obj = json_tokener_parse_ex(c->tok, buf + off, (int)chunk);
		jerr = json_tokener_get_error(c->tok);
		used = json_tokener_get_parse_end(c->tok);
		if (jerr == json_tokener_continue) {
			c->pending += chunk;
			off += chunk;
			if (c->pending > QMP_MAX_REQUEST) {
				reply_error(c, NULL, "GenericError",
					    "JSON parse error, request too large");
				c->closing = true;
			}
			continue;
		}
		json_tokener_reset(c->tok);
		c->pending = 0;
		if (jerr != json_tokener_success) {
			char desc[160];

			snprintf(desc, sizeof(desc), "JSON parse error, %s",
				 json_tokener_error_desc(jerr));
			reply_error(c, NULL, "GenericError", desc);
			/* Resynchronise at the next line, as a line-oriented client expects. */
			off += used ? used : 1;
			if (off > 0 && buf[off - 1] != '\n')
				c->skip_line = true;
			continue;
		}
		off += used;
		handle(c, obj);
		json_object_put(obj);
	}
}

struct qmp_session *qmp_session_create(struct qmp_server *s)
{
	struct qmp_session *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->s = s;
	c->fd = -1;
	c->tok = json_tokener_new_ex(TOKENER_DEPTH);
	if (!c->tok) {
		free(c);
		return NULL;
	}
	out_append(c, s->greeting, strlen(s->greeting));
	c->serial = ++s->next_serial;
	c->all_next = s->sessions;
	s->sessions = c;
	return c;
}

void qmp_session_destroy(struct qmp_session *c)
{
	struct qmp_session **pp;

	if (!c)
		return;
	for (pp = &c->s->sessions; *pp; pp = &(*pp)->all_next) {
		if (*pp == c) {
			*pp = c->all_next;
			break;
		}
	}
	json_tokener_free(c->tok);
	free(c->out);
	free(c);
}

/* ---- server ---------------------------------------------------------------------------- */

struct qmp_server *qmp_server_create(const struct qmp_command *cmds, void *ctx, const char *package,
				     int major, int minor, int micro)
{
	struct qmp_server *s = calloc(1, sizeof(*s));
	struct json_object *g, *q, *v, *ver;

	if (!s)
		return NULL;
	s->cmds = cmds;
	s->ctx = ctx;
	s->listen_fd = s->epoll_fd = s->event_fd = -1;
	pthread_mutex_init(&s->ev_lock, NULL);
	s->ev_tail = &s->ev_head;
	s->nr_event_keys = 1;

	g = json_object_new_object();
	q = json_object_new_object();
	v = json_object_new_object();
	ver = json_object_new_object();
	json_object_object_add(ver, "micro", json_object_new_int(micro));
	json_object_object_add(ver, "minor", json_object_new_int(minor));
	json_object_object_add(ver, "major", json_object_new_int(major));
	json_object_object_add(v, "qemu", ver);
	json_object_object_add(v, "package", json_object_new_string(package));
	json_object_object_add(q, "version", v);
	json_object_object_add(q, "capabilities", json_object_new_array());
	json_object_object_add(g, "QMP", q);
	s->greeting = strdup(json_object_to_json_string_ext(g, JSON_C_TO_STRING_PLAIN));
	json_object_put(g);
	if (!s->greeting) {
		free(s);
		return NULL;
	}
	return s;
}

/* A socket file nobody listens on is left over from a killed VMM: replace it. */
static int clear_stale_socket(const char *path, const struct sockaddr_un *addr)
{
	struct stat st;
	int fd, ret;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ret = connect(fd, (const struct sockaddr *)addr, sizeof(*addr));
	close(fd);
	if (ret == 0)
		return -EADDRINUSE;
	return unlink(path) < 0 ? -errno : 0;
}

static int epoll_add(int ep, int fd, uint32_t events, void *ptr)
{
	struct epoll_event ev = { .events = events, .data.ptr = ptr };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

int qmp_server_listen(struct qmp_server *s, const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	mode_t old;
	int err;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		log_error("--qmp: socket path '%s' is too long (at most %zu bytes)", path,
			  sizeof(addr.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	strcpy(addr.sun_path, path);
	err = clear_stale_socket(path, &addr);
	if (err) {
		log_error("--qmp: cannot use '%s': %s", path,
			  err == -EEXIST       ? "a file that is not a socket is there"
			  : err == -EADDRINUSE ? "another process listens there"
					       : strerror(-err));
		return err;
	}
	s->path = strdup(path);
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	s->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (!s->path || s->epoll_fd < 0 || s->event_fd < 0 || s->listen_fd < 0) {
		err = s->path ? -errno : -ENOMEM;
		log_error("--qmp: %s", strerror(-err));
		return err;
	}
	old = umask(0177); /* mode 0600 from the start: no window where others may connect */
	err = bind(s->listen_fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(old);
	if (err < 0 || listen(s->listen_fd, 64) < 0) {
		err = -errno;
		log_error("--qmp: cannot listen on '%s': %s", path, strerror(-err));
		free(s->path);
		s->path = NULL; /* not ours to unlink */
		return err;
	}
	if (epoll_add(s->epoll_fd, s->listen_fd, EPOLLIN, &s->listen_fd) < 0 ||
	    epoll_add(s->epoll_fd, s->event_fd, EPOLLIN, &s->event_fd) < 0) {
		err = -errno;
		log_error("--qmp: epoll: %s", strerror(-err));
		return err;
	}
	return 0;
}

int qmp_server_fd(const struct qmp_server *s)
{
	return s->epoll_fd;
}

unsigned qmp_server_clients(const struct qmp_server *s)
{
	return s->nr_clients;
}

/* Only reap() and qmp_server_destroy() call this: nothing else may still use c. */
static void client_close(struct qmp_server *s, struct qmp_session *c)
{
	struct qmp_session **pp;

	for (pp = &s->clients; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	s->nr_clients--;
	epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	qmp_session_destroy(c);
}

/*
 * Send what the socket takes now; arm EPOLLOUT for the rest. A client that is gone is
 * marked so (session_drop()); the dispatcher closes it.
 */
static void client_flush(struct qmp_server *s, struct qmp_session *c)
{
	while (c->out_len && !c->gone) {
		ssize_t n = send(c->fd, c->out, c->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			session_drop(c);
			return;
		}
		qmp_session_consume(c, (size_t)n);
	}
	if (c->closing)
		return; /* closed by reap(): no need to watch it any more */
	if (!!c->out_len != c->want_out) {
		struct epoll_event ev = { .events = EPOLLIN | (c->out_len ? EPOLLOUT : 0),
					  .data.ptr = c };

		c->want_out = c->out_len != 0;
		epoll_ctl(s->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
	}
}

/*
 * Close every session that is closing: after one last attempt to send what it queued
 * (a final error reply), unless it is gone. Called where no session is in use.
 */
static void reap(struct qmp_server *s)
{
	struct qmp_session *c, *next;

	for (c = s->clients; c; c = next) {
		next = c->next;
		if (!c->closing)
			continue;
		client_flush(s, c);
		client_close(s, c);
	}
}

static void client_accept(struct qmp_server *s)
{
	for (;;) {
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct qmp_session *c;

		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				log_warn("qmp: accept: %s", strerror(errno));
			return;
		}
		if (s->nr_clients >= QMP_MAX_CLIENTS) {
			static const char busy[] =
			    "{\"error\":{\"class\":\"GenericError\",\"desc\":\"too many "
			    "clients\"}}\r\n";

			if (send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				log_debug("qmp: refusing a client: %s", strerror(errno));
			close(fd);
			continue;
		}
		c = qmp_session_create(s);
		if (!c || epoll_add(s->epoll_fd, fd, EPOLLIN, c) < 0) {
			qmp_session_destroy(c);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->next = s->clients;
		s->clients = c;
		s->nr_clients++;
		client_flush(s, c);
	}
}

static void client_read(struct qmp_server *s, struct qmp_session *c)
{
	static char buf[READ_CHUNK];
	size_t total = 0;

	while (total < READ_BUDGET && !c->closing) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) { /* EOF or error: whatever was half sent is dropped */
			session_drop(c);
			return;
		}
		qmp_session_input(c, buf, (size_t)n);
		total += (size_t)n;
	}
	client_flush(s, c);
}

static void deliver_events(struct qmp_server *s)
{
	struct qmp_event *e, *next;
	struct qmp_session *c;
	uint64_t count;

	if (read(s->event_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		log_debug("qmp: eventfd: %s", strerror(errno));
	pthread_mutex_lock(&s->ev_lock);
	e = s->ev_head;
	s->ev_head = NULL;
	s->ev_tail = &s->ev_head;
	pthread_mutex_unlock(&s->ev_lock);
	for (; e; e = next) {
		next = e->next;
		for (c = s->clients; c; c = c->next)
			if (c->negotiated && (!e->mask || (c->subscribed & e->mask)))
				out_append(c, e->line, strlen(e->line));
		free(e->line);
		free(e);
	}
	for (c = s->clients; c; c = c->next)
		client_flush(s, c);
}

void qmp_server_dispatch(struct qmp_server *s)
{
	struct epoll_event evs[32];
	int i, n;

	if (s->epoll_fd < 0)
		return;
	n = epoll_wait(s->epoll_fd, evs, 32, 0);
	for (i = 0; i < n; i++) {
		void *p = evs[i].data.ptr;
		struct qmp_session *c;

		if (p == &s->listen_fd) {
			client_accept(s);
			continue;
		}
		if (p == &s->event_fd) {
			deliver_events(s);
			continue;
		}
		/* Sessions are freed only by reap(), below; a closing one takes nothing more. */
		for (c = s->clients; c && c != p; c = c->next)
			;
		if (!c || c->closing)
			continue;
		if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
			client_read(s, c);
		else
			client_flush(s, c);
	}
	reap(s);
}

/* Make the dispatcher run deliver_events(), which flushes every client. Any thread. */
static void server_wake(struct qmp_server *s)
{
	uint64_t one = 1;

	if (s->event_fd >= 0 && write(s->event_fd, &one, sizeof(one)) < 0)
		log_debug("qmp: eventfd: %s", strerror(errno));
}

void qmp_server_event(struct qmp_server *s, const char *name, struct json_object *data)
{
	qmp_server_event_mask(s, 0, name, data);
}

void qmp_server_event_mask(struct qmp_server *s, uint32_t mask, const char *name,
			   struct json_object *data)
{
	qmp_server_event_key(s, mask, name, 0, data);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const struct event_limit *event_limit(const char *name, unsigned *idx)
{
	unsigned i;

	for (i = 0; i < NR_EVENT_LIMITS; i++) {
		if (!strcmp(event_limits[i].name, name)) {
			*idx = i;
			return &event_limits[i];
		}
	}
	return NULL;
}

/* ev_lock held. */
static void queue_event(struct qmp_server *s, struct qmp_event *e)
{
	e->next = NULL;
	*s->ev_tail = e;
	s->ev_tail = &e->next;
}

/* Take one event's worth of budget now if there is one (GCRA). ev_lock held. */
static bool throttle_take(struct event_throttle *t, const struct event_limit *l, uint64_t now)
{
	uint64_t interval = 1000000000ull / l->per_sec, tat = t->tat_ns > now ? t->tat_ns : now;

	if (tat - now > (uint64_t)(l->burst - 1) * interval)
		return false;
	t->tat_ns = tat + interval;
	return true;
}

/* Queue the waiting events of `t` the budget allows, keys in turn. ev_lock held. */
static bool throttle_release(struct qmp_server *s, struct event_throttle *t,
			     const struct event_limit *l, uint64_t now)
{
	bool any = false;

	while (t->nr_pending && throttle_take(t, l, now)) {
		struct qmp_event *e;

		while (!t->pending[t->cursor])
			t->cursor = (t->cursor + 1) % s->nr_event_keys;
		e = t->pending[t->cursor];
		t->pending[t->cursor] = NULL;
		t->nr_pending--;
		queue_event(s, e);
		any = true;
	}
	return any;
}

/*
 * A throttled event: queued now, or kept as its key's latest (then *warn says whether to
 * log it, after the lock is let go). True when something was queued. ev_lock held.
 */
static bool throttle_event(struct qmp_server *s, unsigned idx, uint32_t key, struct qmp_event *e,
			   bool *warn)
{
	const struct event_limit *l = &event_limits[idx];
	struct event_throttle *t = &s->throttle[idx];
	uint64_t now = mono_ns();
	bool any = throttle_release(s, t, l, now);

	if (key >= s->nr_event_keys)
		key = s->nr_event_keys - 1;
	if (!t->pending || !t->pending[key]) {
		if (!t->nr_pending && throttle_take(t, l, now)) {
			queue_event(s, e);
			return true;
		}
		if (!t->pending)
			t->pending = calloc(s->nr_event_keys, sizeof(*t->pending));
		if (!t->pending) {
			free(e->line);
			free(e);
			return any;
		}
		t->nr_pending++;
	} else {
		t->coalesced++;
		free(t->pending[key]->line);
		free(t->pending[key]);
	}
	t->pending[key] = e;
	*warn = true;
	return any;
}

void qmp_server_event_key(struct qmp_server *s, uint32_t mask, const char *name, uint32_t key,
			  struct json_object *data)
{
	struct json_object *o = json_object_new_object(), *ts = json_object_new_object();
	struct qmp_event *e = calloc(1, sizeof(*e));
	const struct event_limit *l;
	bool wake = true, warn = false;
	uint64_t coalesced;
	struct timeval tv;
	unsigned idx = 0;

	gettimeofday(&tv, NULL);
	json_object_object_add(o, "event", json_object_new_string(name));
	if (data)
		json_object_object_add(o, "data", data);
	json_object_object_add(ts, "seconds", json_object_new_int64(tv.tv_sec));
	json_object_object_add(ts, "microseconds", json_object_new_int64(tv.tv_usec));
	json_object_object_add(o, "timestamp", ts);
	if (e) {
		e->mask = mask;
		e->line = strdup(json_object_to_json_string_ext(
		    o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	}
	json_object_put(o);
	if (!e || !e->line || s->event_fd < 0) {
		if (e)
			free(e->line);
		free(e);
		return;
	}
	l = event_limit(name, &idx);
	pthread_mutex_lock(&s->ev_lock);
	if (l)
		wake = throttle_event(s, idx, key, e, &warn);
	else
		queue_event(s, e);
	coalesced = l ? s->throttle[idx].coalesced : 0;
	pthread_mutex_unlock(&s->ev_lock);
	if (wake)
		server_wake(s);
	if (warn && log_ratelimit_ok(&s->throttle[idx].rl, 1))
		log_warn("qmp: the guest triggers %s faster than %u/s: only the latest of each "
			 "CPU goes out (%llu replaced so far)",
			 l->name, l->per_sec, (unsigned long long)coalesced);
}

void qmp_server_set_event_keys(struct qmp_server *s, uint32_t nr_keys)
{
	unsigned i;

	pthread_mutex_lock(&s->ev_lock);
	for (i = 0; i < NR_EVENT_LIMITS; i++)
		if (s->throttle[i].pending)
			break;
	if (i == NR_EVENT_LIMITS && nr_keys)
		s->nr_event_keys = nr_keys;
	pthread_mutex_unlock(&s->ev_lock);
}

int qmp_server_next_timeout_ms(struct qmp_server *s)
{
	uint64_t now = mono_ns(), first = UINT64_MAX;
	unsigned i;

	pthread_mutex_lock(&s->ev_lock);
	for (i = 0; i < NR_EVENT_LIMITS; i++) {
		const struct event_limit *l = &event_limits[i];
		const struct event_throttle *t = &s->throttle[i];
		uint64_t slack = (uint64_t)(l->burst - 1) * (1000000000ull / l->per_sec), when;

		if (!t->nr_pending)
			continue;
		/* throttle_take() succeeds once tat - now <= slack. */
		when = t->tat_ns > slack ? t->tat_ns - slack : 0;
		if (when < first)
			first = when;
	}
	pthread_mutex_unlock(&s->ev_lock);
	if (first == UINT64_MAX)
		return -1;
	return first <= now ? 0 : (int)((first - now + 999999) / 1000000);
}

void qmp_server_tick(struct qmp_server *s)
{
	uint64_t now = mono_ns();
	bool any = false;
	unsigned i;

	pthread_mutex_lock(&s->ev_lock);
	for (i = 0; i < NR_EVENT_LIMITS; i++)
		any |= throttle_release(s, &s->throttle[i], &event_limits[i], now);
	pthread_mutex_unlock(&s->ev_lock);
	if (any)
		server_wake(s);
}

void qmp_server_flush(struct qmp_server *s, int timeout_ms)
{
	struct timespec t0, t;
	struct qmp_session *c;

	if (s->epoll_fd < 0)
		return;
	deliver_events(s);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		long left;
		bool pending = false;

		for (c = s->clients; c; c = c->next)
			pending |= c->out_len != 0;
		clock_gettime(CLOCK_MONOTONIC, &t);
		left = timeout_ms -
		       ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (!pending || left <= 0)
			return;
		poll(NULL, 0, 5);
		qmp_server_dispatch(s);
	}
}

void qmp_server_destroy(struct qmp_server *s)
{
	struct qmp_event *e;
	unsigned i;

	if (!s)
		return;
	while (s->clients)
		client_close(s, s->clients);
	while ((e = s->ev_head)) {
		s->ev_head = e->next;
		free(e->line);
		free(e);
	}
	for (i = 0; i < NR_EVENT_LIMITS; i++) {
		struct event_throttle *t = &s->throttle[i];
		uint32_t k;

		for (k = 0; t->pending && k < s->nr_event_keys; k++) {
			if (t->pending[k])
				free(t->pending[k]->line);
			free(t->pending[k]);
		}
		free(t->pending);
	}
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->path)
		unlink(s->path);
	if (s->event_fd >= 0)
		close(s->event_fd);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
	pthread_mutex_destroy(&s->ev_lock);
	free(s->path);
	free(s->greeting);
	free(s);
}

/* ---- deferred replies and subscriptions ----------------------------------------------- */

struct qmp_deferred *qmp_defer(struct qmp_server *s)
{
	struct qmp_deferred *d;

	if (!s->current)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->s = s;
	d->serial = s->current->serial;
	d->id = s->current_id ? json_object_get(s->current_id) : NULL;
	s->deferred = true;
	return d;
}

void qmp_deferred_return(struct qmp_deferred *d, struct json_object *ret,
			 const struct qmp_error *err)
{
	struct qmp_session *c;

	for (c = d->s->sessions; c && c->serial != d->serial; c = c->all_next)
		;
	if (c) {
		if (err && err->class) {
			reply_error(c, d->id, err->class, err->desc);
		} else {
			struct json_object *reply = json_object_new_object();

			json_object_object_add(
			    reply, "return", ret ? json_object_get(ret) : json_object_new_object());
			if (d->id)
				json_object_object_add(reply, "id", json_object_get(d->id));
			out_json(c, reply);
			json_object_put(reply);
		}
		/*
		 * This may run inside a command of any session, even c's own: the dispatcher
		 * sends it (deliver_events() flushes every client), never this function, which
		 * must not close c under its callers.
		 */
		if (c->fd >= 0)
			server_wake(d->s);
	}
	json_object_put(ret);
	json_object_put(d->id);
	free(d);
}

bool qmp_subscribe(struct qmp_server *s, uint32_t mask, bool on)
{
	if (!s->current)
		return false;
	if (on)
		s->current->subscribed |= mask;
	else
		s->current->subscribed &= ~mask;
	return true;
}
