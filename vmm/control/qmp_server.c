// SPDX-License-Identifier: MIT
/*
 * The QMP server's sockets (qmp.h): the listening Unix socket (0600, stale files replaced),
 * clients accepted up to QMP_MAX_CLIENTS, their reads and writes within the limits, the
 * epoll fd the main loop watches, and the dispatcher, which alone closes sessions (reap()).
 * Main thread, but for qmp_server_wake().
 */
#include "qmp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* See qmp_session.c: the same false leak report, through the client list. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif

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
	s->listen_fd = s->epoll_fd = s->event_fd = s->dir_fd = -1;
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

void qmp_server_set_no_machine(struct qmp_server *s, const char *desc)
{
	s->no_machine = desc;
}

const struct qmp_command *qmp_server_commands(const struct qmp_server *s)
{
	return s->cmds;
}

void qmp_server_set_event_names(struct qmp_server *s, const char *const *names)
{
	s->event_names = names;
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

/*
 * The directory of path, opened O_PATH, and path's last component in *name: the seccomp
 * filters let the main thread remove the socket only as a name in this directory
 * (sandbox_allow_unlinkat()). An fd, or -1 with errno set.
 */
static int open_parent(char *path, const char **name)
{
	char *slash = strrchr(path, '/');
	int fd;

	if (!slash) {
		*name = path;
		return open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	*name = slash + 1;
	if (slash == path)
		return open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	*slash = '\0';
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	*slash = '/';
	return fd;
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
	bool tmp;
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
	s->dir_fd = open_parent(s->path, &s->name);
	if (s->dir_fd < 0) {
		err = -errno;
		log_error("--qmp: cannot listen on '%s': %s", path, strerror(-err));
		free(s->path);
		s->path = NULL; /* not ours to unlink */
		return err;
	}
	/*
	 * The path appears only once we listen: bound under a temporary name, listening, then
	 * linked into place, so a client that waits for the file (tests, libvirt-like tools) and
	 * connects at once is never refused (test_qmp.c test_socket_path_appears_listening).
	 * link(), unlike rename(), never replaces a socket someone else put there since.
	 */
	tmp = strlen(path) + 16 < sizeof(addr.sun_path);
	if (tmp) {
		snprintf(addr.sun_path, sizeof(addr.sun_path), "%s.%d.tmp", path, (int)getpid());
		unlink(addr.sun_path); /* ours, left by a crashed process with our pid */
	}
	old = umask(0177); /* mode 0600 from the start: no window where others may connect */
	err = bind(s->listen_fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(old);
	if (err < 0 || listen(s->listen_fd, 64) < 0 || (tmp && link(addr.sun_path, path) < 0)) {
		err = -errno;
		log_error("--qmp: cannot listen on '%s': %s", path, strerror(-err));
		if (tmp)
			unlink(addr.sun_path);
		free(s->path);
		s->path = NULL; /* not ours to unlink */
		return err;
	}
	if (tmp)
		unlink(addr.sun_path);
	if (epoll_add(s->epoll_fd, s->listen_fd, EPOLLIN, &s->listen_fd) < 0 ||
	    epoll_add(s->epoll_fd, s->event_fd, EPOLLIN, &s->event_fd) < 0) {
		err = -errno;
		log_error("--qmp: epoll: %s", strerror(-err));
		return err;
	}
	return 0;
}

int qmp_server_listen_fd(struct qmp_server *s, int fd)
{
	int accepting = 0, domain = 0, err;
	socklen_t len = sizeof(accepting), dlen = sizeof(domain);

	/* Only a listening Unix stream socket: anything else is a wrong fd=N, said so. */
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &dlen) < 0 || !accepting ||
	    domain != AF_UNIX) {
		err = errno == ENOTSOCK || !accepting || domain != AF_UNIX ? -ENOTSOCK : -errno;
		log_error("QMP fd=%d: not a listening Unix socket", fd);
		return err;
	}
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	s->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->epoll_fd < 0 || s->event_fd < 0 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ||
	    epoll_add(s->epoll_fd, fd, EPOLLIN, &s->listen_fd) < 0 ||
	    epoll_add(s->epoll_fd, s->event_fd, EPOLLIN, &s->event_fd) < 0) {
		err = -errno;
		log_error("QMP fd=%d: %s", fd, strerror(-err));
		return err;
	}
	s->listen_fd = fd; /* no path: nothing to remove at exit */
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

bool qmp_server_subscribed(const struct qmp_server *s, uint32_t mask)
{
	const struct qmp_session *c;

	for (c = s->clients; c; c = c->next)
		if (!c->gone && (c->subscribed & mask))
			return true;
	return false;
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
 * marked so (qmp_session_drop()); the dispatcher closes it.
 */
static void client_flush(struct qmp_server *s, struct qmp_session *c)
{
	uint32_t want;

	while (c->out_len && !c->gone) {
		ssize_t n = send(c->fd, c->out, c->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			qmp_session_drop(c);
			return;
		}
		qmp_session_consume(c, (size_t)n);
	}
	if (c->closing)
		return; /* closed by reap(): no need to watch it any more */
	want = (c->input_ended ? 0 : EPOLLIN) | (c->out_len ? EPOLLOUT : 0);
	if (want != c->epoll_events) {
		struct epoll_event ev = { .events = want, .data.ptr = c };

		c->epoll_events = want;
		epoll_ctl(s->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
	}
}

/*
 * Close every session that is closing, after one last attempt to send what it queued (a
 * final error reply) unless it is gone, and every half-closed one that got all its replies.
 * Called where no session is in use.
 */
static void reap(struct qmp_server *s)
{
	struct qmp_session *c, *next;

	for (c = s->clients; c; c = next) {
		next = c->next;
		if (!qmp_session_done(c))
			continue;
		client_flush(s, c);
		client_close(s, c);
	}
}

static unsigned live_clients(const struct qmp_server *s)
{
	const struct qmp_session *c;
	unsigned n = 0;

	for (c = s->clients; c; c = c->next)
		n += !c->closing;
	return n;
}

/*
 * The table is full: close the connection idle longest (nothing received for at least
 * QMP_IDLE_EVICT_MS, no reply owed to it, no request waiting in its input), as nginx
 * reuses its oldest idle keep-alive connections. False: none qualifies. Guarded by
 * test_qmp_fairness.py's test_idle_connections_cannot_lock_new_clients_out and
 * test_qmp.c's test_idle_client_makes_room.
 */
static bool evict_idle(struct qmp_server *s)
{
	static const char bye[] = "{\"error\": {\"class\": \"GenericError\", \"desc\": "
				  "\"idle connection closed: too many clients\"}}";
	uint64_t now = qmp_mono_ns(), age_ns = QMP_IDLE_EVICT_MS * 1000000ull;
	struct qmp_session *c, *victim = NULL;

	for (c = s->clients; c; c = c->next) {
		if (c->closing || c->nr_deferred || c->in_len || now - c->active_ns < age_ns)
			continue;
		if (!victim || c->active_ns < victim->active_ns)
			victim = c;
	}
	if (!victim)
		return false;
	log_debug("qmp: closing a client idle for %llu ms: a new one needs its place",
		  (unsigned long long)((now - victim->active_ns) / 1000000));
	qmp_session_append(victim, bye, sizeof(bye) - 1);
	victim->closing = true; /* reap() sends it that line, then closes it */
	return true;
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
		if (s->nr_clients >= QMP_MAX_CLIENTS && live_clients(s) >= QMP_MAX_CLIENTS &&
		    !evict_idle(s)) {
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
		c->active_ns = qmp_mono_ns();
		c->epoll_events = EPOLLIN;
		c->next = s->clients;
		s->clients = c;
		s->nr_clients++;
		client_flush(s, c);
	}
}

/* Keep the input the pass's budget left unparsed, for the next pass. False without memory. */
static bool keep_input(struct qmp_session *c, const char *buf, size_t len)
{
	char *in = malloc(len);

	if (!in)
		return false;
	memcpy(in, buf, len);
	free(c->in);
	c->in = in;
	c->in_off = 0;
	c->in_len = len;
	return true;
}

/*
 * One client's share of a pass: the input left from its last pass first, then at most
 * one read of QMP_PASS_BYTES, and at most QMP_PASS_REQUESTS requests run in all. What
 * the budget leaves is kept in c->in, and qmp_server_dispatch() comes back to it without
 * waiting for the socket (test_qmp.c's test_requests_per_pass_are_bounded).
 */
static void client_serve(struct qmp_server *s, struct qmp_session *c)
{
	static char buf[QMP_PASS_BYTES];
	unsigned budget = QMP_PASS_REQUESTS;
	size_t used;
	ssize_t n;

	c->served_pass = s->pass;
	if (c->in_len) {
		used = qmp_session_input_some(c, c->in + c->in_off, c->in_len, &budget);
		c->in_off += used;
		c->in_len -= used;
		if (!c->in_len) {
			free(c->in);
			c->in = NULL;
		}
	}
	if (!c->in_len && budget && !c->closing && !c->input_ended) {
		do
			n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
			/* An error: the peer is gone, with what it half sent. */
			qmp_session_drop(c);
			return;
		}
		if (n == 0) /* its end of input: it still gets every reply (QEMU's way) */
			qmp_session_end_input(c);
		if (n > 0) {
			c->active_ns = qmp_mono_ns();
			used = qmp_session_input_some(c, buf, (size_t)n, &budget);
			if (used < (size_t)n && !c->closing &&
			    !keep_input(c, buf + used, (size_t)n - used))
				qmp_session_drop(c);
		}
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
	for (e = qmp_events_take(s); e; e = next) {
		next = e->next;
		for (c = s->clients; c; c = c->next)
			if (c->negotiated && (!e->mask || (c->subscribed & e->mask)))
				qmp_session_append(c, e->line, strlen(e->line));
		free(e->line);
		free(e);
	}
	for (c = s->clients; c; c = c->next)
		client_flush(s, c);
}

void qmp_server_dispatch(struct qmp_server *s)
{
	struct epoll_event evs[32];
	struct qmp_session *c;
	int i, n;

	if (s->epoll_fd < 0)
		return;
	s->pass++;
	n = epoll_wait(s->epoll_fd, evs, 32, 0);
	for (i = 0; i < n; i++) {
		void *p = evs[i].data.ptr;

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
		if (c->input_ended && (evs[i].events & (EPOLLHUP | EPOLLERR)))
			qmp_session_drop(c); /* half-closed, then closed: nobody reads replies */
		else if (!c->input_ended && (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
			client_serve(s, c);
		else
			client_flush(s, c);
	}
	/* Input kept from an earlier pass gets its share too: epoll does not report it. */
	for (c = s->clients; c; c = c->next)
		if (c->in_len && !c->closing && c->served_pass != s->pass)
			client_serve(s, c);
	reap(s);
	/* Input still kept: the main loop must come back at once (the eventfd wakes it). */
	for (c = s->clients; c; c = c->next) {
		if (c->in_len && !c->closing) {
			qmp_server_wake(s);
			break;
		}
	}
}

/* The dispatcher then runs deliver_events(), which flushes every client. */
void qmp_server_wake(struct qmp_server *s)
{
	uint64_t one = 1;

	if (s->event_fd >= 0 && write(s->event_fd, &one, sizeof(one)) < 0)
		log_debug("qmp: eventfd: %s", strerror(errno));
}

int qmp_server_event_fd(const struct qmp_server *s)
{
	return s->event_fd;
}

int qmp_server_dir_fd(const struct qmp_server *s)
{
	return s->dir_fd;
}

const char *qmp_server_path(const struct qmp_server *s)
{
	return s->path;
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
	if (!s)
		return;
	while (s->clients)
		client_close(s, s->clients);
	qmp_events_free(s);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->path)
		unlinkat(s->dir_fd, s->name, 0);
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	if (s->event_fd >= 0)
		close(s->event_fd);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
	pthread_mutex_destroy(&s->ev_lock);
	free(s->path);
	free(s->greeting);
	free(s);
}
