// SPDX-License-Identifier: MIT
/*
 * A client's QMP connection (see conn.h): a raw line buffer over the socket, never a stdio
 * stream in text mode.
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"
#include "print.h"

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The next JSON object from the server, waiting at most until `deadline` (ms). */
static struct json_object *recv_msg(struct conn *c, int64_t deadline)
{
	for (;;) {
		char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		int64_t left = deadline - now_ms();
		ssize_t n;

		if (nl) {
			size_t line = (size_t)(nl - c->buf) + 1;
			struct json_object *o;

			*nl = '\0';
			o = json_tokener_parse(c->buf);
			memmove(c->buf, c->buf + line, c->len - line);
			c->len -= line;
			if (!o || !json_object_is_type(o, json_type_object))
				die(EXIT_CONN, "the server sent something that is not QMP");
			return o;
		}
		if (left <= 0)
			return NULL;
		if (poll(&p, 1, (int)(left > INT_MAX ? INT_MAX : left)) < 0 && errno != EINTR)
			die(EXIT_USAGE, "poll: %s", strerror(errno));
		if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if (c->len + 65536 > c->cap) {
			c->cap = c->cap ? c->cap * 2 : 131072;
			if (c->cap > (64u << 20))
				die(EXIT_USAGE, "the server sent a line over 64 MiB");
			c->buf = realloc(c->buf, c->cap);
			if (!c->buf)
				die(EXIT_USAGE, "out of memory");
		}
		n = read(c->fd, c->buf + c->len, c->cap - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die(EXIT_CONN, "the VM closed the connection");
		c->len += (size_t)n;
	}
}

struct json_object *conn_execute(struct conn *c, const char *name, struct json_object *args)
{
	struct json_object *req = json_object_new_object();
	const char *text;
	unsigned id = ++c->next_id;

	json_object_object_add(req, "execute", json_object_new_string(name));
	if (args)
		json_object_object_add(req, "arguments", args);
	json_object_object_add(req, "id", json_object_new_int((int)id));
	text = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	if (dprintf(c->fd, "%s\n", text) < 0)
		die(EXIT_CONN, "cannot send to the VM: %s", strerror(errno));
	json_object_put(req);
	for (;;) {
		struct json_object *msg = recv_msg(c, now_ms() + c->timeout_ms), *rid;

		if (!msg)
			die(EXIT_NO, "no reply to %s within %d s", name, c->timeout_ms / 1000);
		if (json_object_object_get_ex(msg, "event", NULL)) {
			json_object_array_add(c->events, msg);
			continue;
		}
		if (json_object_object_get_ex(msg, "id", &rid) &&
		    json_object_get_int(rid) == (int)id)
			return msg;
		json_object_put(msg);
	}
}

struct json_object *conn_cmd(struct conn *c, const char *name, struct json_object *args)
{
	struct json_object *reply = conn_execute(c, name, args), *ret, *err, *desc;

	if (json_object_object_get_ex(reply, "error", &err)) {
		const char *text;
		size_t len = strlen(name);

		json_object_object_get_ex(err, "desc", &desc);
		text = json_object_get_string(desc);
		/* The VMM's agent errors name the command already: once is enough. */
		if (text && !strncmp(text, name, len) && text[len] == ':')
			fprintf(stderr, "plugctl: %s\n", tty(text));
		else
			fprintf(stderr, "plugctl: %s: %s\n", name, tty(text));
		json_object_put(reply);
		exit(EXIT_NO);
	}
	json_object_object_get_ex(reply, "return", &ret);
	json_object_get(ret);
	json_object_put(reply);
	return ret;
}

struct json_object *conn_wait_event(struct conn *c, bool (*match)(struct json_object *, void *),
				    void *arg)
{
	return conn_poll_event(c, match, arg, now_ms() + c->timeout_ms);
}

struct json_object *conn_poll_event(struct conn *c, bool (*match)(struct json_object *, void *),
				    void *arg, int64_t deadline)
{
	for (;;) {
		size_t i;
		struct json_object *msg;

		for (i = 0; i < json_object_array_length(c->events); i++) {
			struct json_object *e = json_object_array_get_idx(c->events, i);

			if (match(e, arg)) {
				json_object_get(e);
				json_object_array_del_idx(c->events, i, 1);
				return e;
			}
		}
		msg = recv_msg(c, deadline);
		if (!msg)
			return NULL;
		if (json_object_object_get_ex(msg, "event", NULL))
			json_object_array_add(c->events, msg);
		else
			json_object_put(msg);
	}
}

bool conn_listening(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, ret;

	if (strlen(path) >= sizeof(addr.sun_path))
		return false;
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	ret = connect(fd, (struct sockaddr *)&addr, sizeof(addr));
	close(fd);
	return ret == 0;
}

const char *conn_default_socket(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("PLUGVM_QMP"), *dir = getenv("XDG_RUNTIME_DIR");
	char pattern[PATH_MAX];
	size_t stale = 0, live = 0, j;
	glob_t g;

	if (env && *env)
		return env;
	/* Where plugvm puts its default socket (control.c): $XDG_RUNTIME_DIR, else /tmp. */
	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(pattern, sizeof(pattern), "%s/plugvm-*.qmp", dir);
	if (glob(pattern, 0, NULL, &g) == 0) {
		for (j = 0; j < g.gl_pathc && live < 2; j++) {
			if (!conn_listening(g.gl_pathv[j])) {
				stale++;
				continue;
			}
			if (!live++)
				snprintf(path, sizeof(path), "%s", g.gl_pathv[j]);
		}
		globfree(&g);
	}
	if (live > 1)
		die(EXIT_USAGE, "several VMs in %s: say which with -s PATH", dir);
	if (live)
		return path;
	if (stale)
		die(EXIT_CONN,
		    "no running plugvm found in %s (%zu plugvm-*.qmp file%s nobody listens on: "
		    "left by killed VMs): start plugvm, or give -s PATH",
		    dir, stale, stale == 1 ? "" : "s");
	die(EXIT_CONN, "no plugvm QMP socket in %s: start plugvm, or give -s PATH", dir);
}

void conn_open(struct conn *c, const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct json_object *greeting, *ret;

	if (strlen(path) >= sizeof(addr.sun_path))
		die(EXIT_USAGE, "socket path too long: %s", path);
	strcpy(addr.sun_path, path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		die(EXIT_CONN, "cannot connect to %s: %s", path, strerror(errno));
	c->events = json_object_new_array();
	greeting = recv_msg(c, now_ms() + c->timeout_ms);
	if (!greeting || !json_object_object_get_ex(greeting, "QMP", NULL))
		die(EXIT_CONN, "%s does not speak QMP", path);
	json_object_put(greeting);
	ret = conn_cmd(c, "qmp_capabilities", NULL);
	json_object_put(ret);
}

void conn_close(struct conn *c)
{
	json_object_put(c->events);
	free(c->buf);
	close(c->fd);
}
