// SPDX-License-Identifier: MIT
/* QMP clients for unit tests (see qmp_client.h). */
#include "tests/unit/unit.h"

#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "qmp_client.h"

struct json_object *qmp_test_next_line(struct qmp_session *c)
{
	size_t len;
	const char *out = qmp_session_output(c, &len);
	const char *nl = len ? memchr(out, '\n', len) : NULL;
	struct json_object *o;
	char *line;

	if (!nl)
		return NULL;
	assert_true(nl > out && nl[-1] == '\r'); /* CRLF, as QEMU */
	line = strndup(out, (size_t)(nl - out - 1));
	o = json_tokener_parse(line);
	assert_non_null(o);
	free(line);
	qmp_session_consume(c, (size_t)(nl - out) + 1);
	return o;
}

void qmp_test_send(struct qmp_session *c, const char *text)
{
	qmp_session_input(c, text, strlen(text));
}

struct qmp_session *qmp_test_session(struct qmp_server *s)
{
	static const char caps[] = "{\"execute\": \"qmp_capabilities\"}\n";
	struct qmp_session *c = qmp_session_create(s);
	struct json_object *o;

	assert_non_null(c);
	json_object_put(qmp_test_next_line(c)); /* the greeting */
	qmp_test_send(c, caps);
	o = qmp_test_next_line(c);
	assert_non_null(o);
	json_object_put(o);
	return c;
}

/* Let the server dispatch until `fd` has something to read, then read one chunk. */
static void read_once(struct qmp_server *s, int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char buf[512];

	while (!poll(&p, 1, 0))
		qmp_server_dispatch(s);
	assert_true(read(fd, buf, sizeof(buf)) > 0);
}

void qmp_test_listen(struct qmp_server *s, const char *tag, char *path, size_t len)
{
	snprintf(path, len, "/tmp/plugvm-test-%s-%d.qmp", tag, (int)getpid());
	assert_int_equal(qmp_server_listen(s, path), 0);
}

int qmp_test_client(struct qmp_server *s, const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	unsigned before = qmp_server_clients(s);
	int fd;

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	read_once(s, fd); /* the greeting */
	assert_int_equal(qmp_server_clients(s), before + 1);
	return fd;
}

void qmp_test_negotiate(struct qmp_server *s, int fd)
{
	static const char caps[] = "{\"execute\": \"qmp_capabilities\"}\n";

	assert_int_equal(send(fd, caps, sizeof(caps) - 1, 0), (ssize_t)sizeof(caps) - 1);
	read_once(s, fd); /* {"return": {}} */
}

char *qmp_test_read(struct qmp_server *s, int fd)
{
	static char buf[1 << 20];
	size_t len = 0;
	unsigned i;

	for (i = 0; i < 20; i++) {
		ssize_t r;

		qmp_server_dispatch(s);
		r = recv(fd, buf + len, sizeof(buf) - len - 1, MSG_DONTWAIT);
		if (r > 0)
			len += (size_t)r;
	}
	buf[len] = 0;
	return buf;
}

unsigned qmp_test_count(const char *text, const char *needle)
{
	unsigned n = 0;

	for (; (text = strstr(text, needle)); text++)
		n++;
	return n;
}
