// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/control/qmp_*.c, mostly through the socketless session API: the
 * greeting, capabilities negotiation, command dispatch with argument checking, QEMU's error shapes and classes,
 * ids echoed, requests split across reads and several in one read, malformed input with
 * resynchronisation, and the request and output size limits.
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include "tests/unit/vmm_shim/qmp_client.h"
#include "vmm/control/qmp.h"

static int echo_calls;

/* "echo": returns its arguments; "fail": a GenericError; "need": requires an int "n". */
static struct json_object *cmd_echo(void *ctx, struct json_object *args, struct qmp_error *err)
{
	(void)err;
	assert_ptr_equal(ctx, &echo_calls);
	echo_calls++;
	return json_object_get(args);
}

static struct json_object *cmd_fail(void *ctx, struct json_object *args, struct qmp_error *err)
{
	(void)ctx;
	(void)args;
	qmp_error_set(err, "GenericError", "failed on purpose %d", 42);
	return NULL;
}

static struct json_object *cmd_need(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct json_object *n;

	(void)ctx;
	(void)err;
	assert_true(json_object_object_get_ex(args, "n", &n));
	return json_object_new_int(json_object_get_int(n) * 2);
}

static const struct qmp_arg echo_args[] = {
	{ "any", json_type_null, false },
	{ "s", json_type_string, false },
	{ NULL, json_type_null, false },
};

static const struct qmp_arg need_args[] = {
	{ "n", json_type_int, true },
	{ "flag", json_type_boolean, false },
	{ NULL, json_type_null, false },
};

static struct qmp_server *later_server;
static struct qmp_deferred *later;

/* "later": a deferred reply, given by the test (qmp_deferred_return()) when it chooses. */
static struct json_object *cmd_later(void *ctx, struct json_object *args, struct qmp_error *err)
{
	(void)ctx;
	(void)args;
	(void)err;
	later = qmp_defer(later_server);
	assert_non_null(later);
	return NULL;
}

static const struct qmp_command cmds[] = {
	{ "echo", cmd_echo, echo_args },
	{ "later", cmd_later, NULL },
	{ "fail", cmd_fail, NULL },
	{ "need", cmd_need, need_args },
	{ "free", cmd_echo, echo_args, QMP_CMD_NO_MACHINE },
	{ NULL, NULL, NULL },
};

struct fixture {
	struct qmp_server *s;
	struct qmp_session *c;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->s = qmp_server_create(cmds, &echo_calls, "plugvm test", 1, 2, 3);
	f->c = qmp_session_create(f->s);
	assert_non_null(f->c);
	echo_calls = 0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	qmp_session_destroy(f->c);
	qmp_server_destroy(f->s);
	free(f);
	return 0;
}

static const char *path_str(struct json_object *o, const char *a, const char *b)
{
	struct json_object *x, *y;

	if (!json_object_object_get_ex(o, a, &x))
		return NULL;
	if (!b)
		return json_object_get_string(x);
	if (!json_object_object_get_ex(x, b, &y))
		return NULL;
	return json_object_get_string(y);
}

/* Send one request and expect an error of `class`; returns its desc (static copy). */
static const char *expect_error(struct qmp_session *c, const char *req, const char *class)
{
	static char desc[256];
	struct json_object *r;

	qmp_test_send(c, req);
	r = qmp_test_next_line(c);
	assert_non_null(r);
	assert_string_equal(path_str(r, "error", "class"), class);
	snprintf(desc, sizeof(desc), "%s", path_str(r, "error", "desc"));
	json_object_put(r);
	assert_null(qmp_test_next_line(c));
	return desc;
}

static void negotiate(struct qmp_session *c)
{
	struct json_object *g = qmp_test_next_line(c), *r;

	json_object_put(g);
	qmp_test_send(c, "{\"execute\": \"qmp_capabilities\"}\r\n");
	r = qmp_test_next_line(c);
	assert_string_equal(json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN),
			    "{\"return\":{}}");
	json_object_put(r);
}

static void test_greeting(void **state)
{
	struct fixture *f = *state;
	struct json_object *g = qmp_test_next_line(f->c), *q, *v, *caps;

	assert_non_null(g);
	assert_true(json_object_object_get_ex(g, "QMP", &q));
	assert_true(json_object_object_get_ex(q, "version", &v));
	assert_string_equal(path_str(v, "package", NULL), "plugvm test");
	assert_string_equal(path_str(v, "qemu", "major"), "1");
	assert_string_equal(path_str(v, "qemu", "minor"), "2");
	assert_string_equal(path_str(v, "qemu", "micro"), "3");
	assert_true(json_object_object_get_ex(q, "capabilities", &caps));
	assert_int_equal(json_object_array_length(caps), 0);
	json_object_put(g);
	assert_null(qmp_test_next_line(f->c));
}

static void test_negotiation(void **state)
{
	struct fixture *f = *state;
	const char *d;

	json_object_put(qmp_test_next_line(f->c));
	d = expect_error(f->c, "{\"execute\": \"echo\"}", "CommandNotFound");
	assert_non_null(strstr(d, "qmp_capabilities"));
	assert_int_equal(echo_calls, 0);
	/* oob is not offered, so it cannot be enabled. */
	d = expect_error(
	    f->c, "{\"execute\": \"qmp_capabilities\", \"arguments\": {\"enable\": [\"oob\"]}}",
	    "GenericError");
	assert_non_null(strstr(d, "oob"));
	qmp_test_send(f->c, "{\"execute\": \"qmp_capabilities\", \"arguments\": {\"enable\": []}}");
	json_object_put(qmp_test_next_line(f->c));
	d = expect_error(f->c, "{\"execute\": \"qmp_capabilities\"}", "CommandNotFound");
	assert_non_null(strstr(d, "already complete"));
}

static void test_dispatch_and_ids(void **state)
{
	struct fixture *f = *state;
	struct json_object *r, *ret, *id;

	negotiate(f->c);
	qmp_test_send(f->c,
		      "{\"execute\": \"echo\", \"arguments\": {\"any\": [1, 2], \"s\": \"x\"}, "
		      "\"id\": {\"tag\": \"abc\"}}");
	r = qmp_test_next_line(f->c);
	assert_true(json_object_object_get_ex(r, "return", &ret));
	assert_string_equal(json_object_to_json_string_ext(ret, JSON_C_TO_STRING_PLAIN),
			    "{\"any\":[1,2],\"s\":\"x\"}");
	assert_true(json_object_object_get_ex(r, "id", &id));
	assert_string_equal(json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN),
			    "{\"tag\":\"abc\"}");
	json_object_put(r);
	/* Errors carry the id too. */
	qmp_test_send(f->c, "{\"execute\": \"fail\", \"id\": 9}");
	r = qmp_test_next_line(f->c);
	assert_string_equal(path_str(r, "error", "desc"), "failed on purpose 42");
	assert_string_equal(path_str(r, "id", NULL), "9");
	json_object_put(r);
	qmp_test_send(f->c, "{\"execute\": \"need\", \"arguments\": {\"n\": 21}}");
	r = qmp_test_next_line(f->c);
	assert_string_equal(path_str(r, "return", NULL), "42");
	json_object_put(r);
	assert_int_equal(echo_calls, 1);
}

static void test_argument_errors(void **state)
{
	static const struct {
		const char *req, *class, *desc;
	} errors[] = {
		{ "{\"execute\": \"need\"}", "GenericError", "Parameter 'n' is missing" },
		{ "{\"execute\": \"need\", \"arguments\": {\"n\": \"3\"}}", "GenericError",
		  "Invalid parameter type for 'n', expected: integer" },
		{ "{\"execute\": \"need\", \"arguments\": {\"n\": 1, \"flag\": 1}}", "GenericError",
		  "Invalid parameter type for 'flag', expected: boolean" },
		{ "{\"execute\": \"need\", \"arguments\": {\"n\": 1, \"x\": 1}}", "GenericError",
		  "Parameter 'x' is unexpected" },
		{ "{\"execute\": \"fail\", \"arguments\": {\"a\": 1}}", "GenericError",
		  "Parameter 'a' is unexpected" },
		{ "{\"execute\": \"need\", \"arguments\": [1]}", "GenericError",
		  "QMP input member 'arguments' must be an object" },
		{ "{\"execute\": 5}", "GenericError",
		  "QMP input member 'execute' must be a string" },
		{ "{\"arguments\": {}}", "GenericError", "QMP input lacks member 'execute'" },
		{ "{\"execute\": \"echo\", \"bogus\": 1}", "GenericError",
		  "QMP input member 'bogus' is unexpected" },
		{ "{\"execute\": \"no-such\"}", "CommandNotFound",
		  "The command no-such has not been found" },
		{ "[1, 2]", "GenericError", "QMP input must be a JSON object" },
		{ "\"str\"\n", "GenericError", "QMP input must be a JSON object" },
	};
	struct fixture *f = *state;
	size_t i;

	negotiate(f->c);
	for (i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		assert_string_equal(expect_error(f->c, errors[i].req, errors[i].class),
				    errors[i].desc);
	assert_int_equal(echo_calls, 0);
}

static void test_streaming(void **state)
{
	struct fixture *f = *state;
	const char *req = "{\"execute\": \"echo\", \"arguments\": {\"s\": \"a\\\"b{\"}, \"id\": 1}"
			  "\r\n{\"execute\":\"echo\",\"id\":2}{\"execute\":\"echo\",\"id\":3}\n";
	struct json_object *r;
	size_t i;
	int id;

	negotiate(f->c);
	/* One byte at a time: nothing is answered before its request is complete. */
	for (i = 0; i < strlen(req); i++)
		qmp_session_input(f->c, req + i, 1);
	for (id = 1; id <= 3; id++) {
		r = qmp_test_next_line(f->c);
		assert_non_null(r);
		assert_int_equal(atoi(path_str(r, "id", NULL)), id);
		json_object_put(r);
	}
	assert_null(qmp_test_next_line(f->c));
	assert_int_equal(echo_calls, 3);
}

/*
 * Input fed a request at a time (qmp_session_input_some() with a budget of 1, the rest
 * fed again, as the server's passes do) is answered exactly as the same input in one go:
 * requests, parse errors with the rest of their line skipped, blanks, a split request.
 */
static void test_budgeted_input_answers_the_same(void **state)
{
	struct fixture *f = *state;
	static const char in[] = "{\"execute\": \"echo\", \"id\": 1}{\"execute\": \"fail\"}\n"
				 "not json {\"execute\": \"echo\", \"id\": \"skipped\"}\n   \n"
				 "[1]\n{\"execute\": \"echo\", \"arguments\": {\"s\": \"x\"}, "
				 "\"id\": 2}\n}\n{\"execute\": \"echo\", \"id\": 3}\n";
	struct qmp_session *b = qmp_test_session(f->s);
	const char *out_a, *out_b;
	size_t len_a, len_b, off = 0, used;
	unsigned calls = 0;

	negotiate(f->c);
	qmp_session_input(f->c, in, sizeof(in) - 1);
	while (off < sizeof(in) - 1) {
		unsigned budget = 1;

		used = qmp_session_input_some(b, in + off, sizeof(in) - 1 - off, &budget);
		assert_true(used > 0 || budget == 0);
		off += used;
		assert_true(++calls < sizeof(in));
	}
	assert_true(calls >= 7); /* one request or parse error a call */
	out_a = qmp_session_output(f->c, &len_a);
	out_b = qmp_session_output(b, &len_b);
	assert_int_equal(len_a, len_b);
	assert_memory_equal(out_a, out_b, len_a);
	/* The output is a length, not a string. */
	assert_null(memmem(out_a, len_a, "skipped", 7));
	assert_non_null(memmem(out_a, len_a, "\"id\":3", 6));
	qmp_session_destroy(b);
}

static void test_malformed_then_recovers(void **state)
{
	struct fixture *f = *state;
	struct json_object *r;
	const char *d;

	negotiate(f->c);
	d = expect_error(f->c, "{\"execute\": nonsense here}\n", "GenericError");
	assert_non_null(strstr(d, "JSON parse error"));
	d = expect_error(f->c, "}\n", "GenericError");
	assert_non_null(strstr(d, "JSON parse error"));
	/* The session goes on with the next line. */
	qmp_test_send(f->c, "{\"execute\": \"echo\", \"id\": \"after\"}\n");
	r = qmp_test_next_line(f->c);
	assert_string_equal(path_str(r, "id", NULL), "after");
	json_object_put(r);
	/* Too deep: refused, not a stack overflow. */
	{
		char deep[200];
		size_t i;

		for (i = 0; i < 100; i++)
			deep[i] = '[';
		deep[100] = '\n';
		deep[101] = '\0';
		d = expect_error(f->c, deep, "GenericError");
		assert_non_null(strstr(d, "JSON parse error"));
	}
	assert_false(qmp_session_closing(f->c));
}

static void test_request_too_large(void **state)
{
	struct fixture *f = *state;
	char *big = malloc(QMP_MAX_REQUEST + 100);
	const char *d;

	negotiate(f->c);
	static const char head[] = "{\"execute\": \"echo\", \"arguments\": {\"s\": \"";

	memcpy(big, head, sizeof(head) - 1);
	memset(big + sizeof(head) - 1, 'a', QMP_MAX_REQUEST + 50);
	qmp_session_input(f->c, big, sizeof(head) - 1 + QMP_MAX_REQUEST + 50);
	free(big);
	assert_true(qmp_session_closing(f->c));
	{
		struct json_object *r = qmp_test_next_line(f->c);

		assert_string_equal(path_str(r, "error", "class"), "GenericError");
		d = path_str(r, "error", "desc");
		assert_non_null(strstr(d, "too large"));
		json_object_put(r);
	}
	assert_int_equal(echo_calls, 0);
	/* A closing session takes nothing more. */
	qmp_test_send(f->c, "{\"execute\": \"echo\"}");
	assert_null(qmp_test_next_line(f->c));
}

static void test_output_limit(void **state)
{
	struct fixture *f = *state;
	char req[1200];
	unsigned i;

	negotiate(f->c);
	/* A client that never reads: its queue is bounded, then it is dropped. */
	memset(req, 0, sizeof(req));
	for (i = 0; i < 2 * QMP_MAX_OUTPUT / 1000 && !qmp_session_closing(f->c); i++) {
		int n =
		    snprintf(req, sizeof(req),
			     "{\"execute\": \"echo\", \"id\": %u, \"arguments\": {\"s\": \"", i);

		memset(req + n, 'x', 1000);
		strcpy(req + n + 1000, "\"}}");
		qmp_test_send(f->c, req);
	}
	assert_true(qmp_session_closing(f->c));
	{
		size_t len;

		qmp_session_output(f->c, &len);
		assert_true(len <= QMP_MAX_OUTPUT);
	}
}

/* A socket client of f->s (listening on a fresh path), accepted and greeted. */
static int socket_client(struct fixture *f, char *path, size_t len)
{
	qmp_test_listen(f->s, "qmp", path, len);
	return qmp_test_client(f->s, path);
}

/*
 * A socket client that never reads goes over QMP_MAX_OUTPUT and keeps
 * sending. It must be disconnected for real (its socket closed, the server's count back
 * to 0), not left half-closed with its input unread and the main loop spinning on it.
 */
static void test_client_over_output_limit_is_dropped(void **state)
{
	struct fixture *f = *state;
	char path[108], req[1200];
	unsigned i, sent = 0, rounds;
	int fd = socket_client(f, path, sizeof(path)), n;
	size_t off = 0;

	assert_int_equal(send(fd, "{\"execute\": \"qmp_capabilities\"}\n", 32, 0), 32);
	n = snprintf(req, sizeof(req), "{\"execute\": \"echo\", \"arguments\": {\"s\": \"");
	memset(req + n, 'x', 1000);
	strcpy(req + n + 1000, "\"}}\n");
	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (rounds = 0; rounds < 100000 && qmp_server_clients(f->s); rounds++) {
		/* Keep sending (never reading) while the server takes it. */
		for (i = 0; i < 64; i++) {
			ssize_t w = send(fd, req + off, strlen(req) - off, MSG_NOSIGNAL);

			if (w <= 0)
				break;
			off += (size_t)w;
			if (off == strlen(req)) {
				off = 0;
				sent++;
			}
		}
		qmp_server_dispatch(f->s);
	}
	assert_int_equal(qmp_server_clients(f->s), 0);
	assert_true(sent >= QMP_MAX_OUTPUT / 1100);
	/* The client sees the end of the stream once it reads what was sent before. */
	{
		static char buf[1 << 16];
		ssize_t r;

		fcntl(fd, F_SETFL, 0);
		while ((r = read(fd, buf, sizeof(buf))) > 0)
			;
		assert_true(r == 0 || (r < 0 && errno == ECONNRESET));
	}
	close(fd);
	unlink(path);
}

/*
 * A client that half-closes after its last command (`printf ... | socat`, a
 * shell pipe) gets every reply, a deferred one and the events until then included, and
 * only then the end of the stream; the commands run as before.
 */
static void test_half_close_answers_everything(void **state)
{
	struct fixture *f = *state;
	static const char reqs[] =
	    "{\"execute\": \"qmp_capabilities\"}\n"
	    "{\"execute\": \"later\", \"id\": 1}\n"
	    "{\"execute\": \"echo\", \"arguments\": {\"s\": \"a\"}, \"id\": 2}\n"
	    "{\"execute\": \"nope\", \"id\": 3}\n"
	    "{\"execute\": \"echo\", \"id\"";
	static char all[1 << 16];
	char path[108], *text;
	size_t len = 0;
	ssize_t r;
	int fd;

	later_server = f->s;
	later = NULL;
	fd = socket_client(f, path, sizeof(path));
	assert_int_equal(send(fd, reqs, sizeof(reqs) - 1, 0), (ssize_t)(sizeof(reqs) - 1));
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	text = qmp_test_read(f->s, fd);
	len = strlen(text);
	memcpy(all, text, len);
	assert_non_null(later);
	assert_int_equal(echo_calls, 1);
	/* Still open: the deferred reply is to come, and an event goes out meanwhile. */
	assert_int_equal(qmp_server_clients(f->s), 1);
	qmp_server_event(f->s, "LATE", NULL);
	qmp_deferred_return(later, json_object_new_string("done"), NULL);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (int i = 0; i < 1000 && qmp_server_clients(f->s); i++) {
		qmp_server_dispatch(f->s);
		r = recv(fd, all + len, sizeof(all) - len - 1, 0);
		if (r > 0)
			len += (size_t)r;
	}
	assert_int_equal(qmp_server_clients(f->s), 0);
	fcntl(fd, F_SETFL, 0);
	while ((r = recv(fd, all + len, sizeof(all) - len - 1, 0)) > 0)
		len += (size_t)r;
	assert_int_equal(r, 0); /* the end of the stream, after everything */
	all[len] = 0;
	assert_non_null(strstr(all, "{\"return\":{}}"));
	assert_non_null(strstr(all, "{\"return\":{\"s\":\"a\"},\"id\":2}"));
	assert_non_null(strstr(all, "\"The command nope has not been found\"},\"id\":3}"));
	assert_non_null(strstr(all, "\"event\":\"LATE\""));
	assert_non_null(strstr(all, "{\"return\":\"done\",\"id\":1}"));
	assert_int_equal(qmp_test_count(all, "\r\n"),
			 5); /* 4 replies + the event (greeting read) */
	close(fd);
	unlink(path);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Every event line the client can read now (after dispatching), parsed into `ev`. */
static unsigned read_events(struct fixture *f, int fd, struct json_object **ev, unsigned max)
{
	char *buf = qmp_test_read(f->s, fd), *p, *nl;
	size_t len = strlen(buf);
	unsigned n = 0;

	for (p = buf; (nl = strchr(p, '\n')); p = nl + 1) {
		struct json_object *o;

		*nl = 0;
		o = json_tokener_parse(p);
		assert_non_null(o);
		if (n < max)
			ev[n] = o;
		else
			json_object_put(o);
		n++;
	}
	assert_true(p == buf + len); /* whole lines only */
	return n;
}

static int64_t event_n(struct json_object *e)
{
	struct json_object *d, *n;

	assert_true(json_object_object_get_ex(e, "data", &d));
	assert_true(json_object_object_get_ex(d, "n", &n));
	return json_object_get_int64(n);
}

static struct json_object *data_n(int64_t n)
{
	struct json_object *d = json_object_new_object();

	json_object_object_add(d, "n", json_object_new_int64(n));
	return d;
}

/*
 * The events a guest triggers at will (one `rep outsl` to the hotplug block's _OST port is
 * 1024 ACPI_DEVICE_OST events) are rate-limited for every client: a burst goes out, the
 * latest of the rest waits for the budget to refill; other events are not limited.
 */
static void test_guest_events_are_throttled(void **state)
{
	struct fixture *f = *state;
	static struct json_object *ev[2048];
	char path[108];
	int fd = socket_client(f, path, sizeof(path));
	unsigned i, n;
	double t0;

	assert_int_equal(send(fd, "{\"execute\": \"qmp_capabilities\"}\n", 32, 0), 32);
	n = read_events(f, fd, ev, 2048);
	assert_int_equal(n, 1);
	json_object_put(ev[0]);
	t0 = now_s();
	for (i = 0; i < 1024; i++)
		qmp_server_event(f->s, "ACPI_DEVICE_OST", data_n(i));
	for (i = 0; i < 1024; i++)
		qmp_server_event(f->s, "SHUTDOWN", data_n(i)); /* not guest-triggered */
	n = read_events(f, fd, ev, 2048);
	/* The burst, what the rate allowed while this ran, and every SHUTDOWN. */
	assert_true(n <= 256 + 256 * (now_s() - t0) + 1 + 1024);
	assert_true(n < 1024 + 1024);
	assert_true(n >= 1024 + 1);
	/* The burst is the first events, in order; later ones are each the latest then. */
	for (i = 0; i < n; i++) {
		if (!strcmp(path_str(ev[i], "event", NULL), "ACPI_DEVICE_OST")) {
			if (i < 256)
				assert_int_equal(event_n(ev[i]), i);
			else
				assert_true(event_n(ev[i]) > event_n(ev[i - 1]));
		}
	}
	for (i = 0; i < n; i++)
		json_object_put(ev[i]);
	unlink(path);
	close(fd);
}

/* The events over the limit: the latest of each key goes out when its turn comes. */
static void test_throttled_events_keep_the_latest_per_key(void **state)
{
	struct fixture *f = *state;
	static struct json_object *ev[2048];
	int64_t last[4] = { -1, -1, -1, -1 };
	unsigned i, n, got = 0, late = 0;
	char path[108];
	double t0;
	int fd;

	qmp_server_set_event_keys(f->s, 4);
	fd = socket_client(f, path, sizeof(path));
	assert_int_equal(send(fd, "{\"execute\": \"qmp_capabilities\"}\n", 32, 0), 32);
	json_object_put((read_events(f, fd, ev, 1), ev[0]));
	assert_int_equal(qmp_server_next_timeout_ms(f->s), -1);
	t0 = now_s();
	for (i = 0; i < 1000; i++)
		qmp_server_event_key(f->s, 0, "GUEST_LOCKDEP_WARNING", i % 8, data_n(i));
	n = read_events(f, fd, ev, 2048);
	if (now_s() - t0 < 0.09) /* less than one 10/s interval: exactly the burst */
		assert_int_equal(n, 32);
	/*
	 * The burst is the first ones, in order; a slow run (ASan, a busy host) lets the rate
	 * send some later ones meanwhile, each the one being raised then: in order too.
	 */
	assert_true(n >= 32);
	for (i = 0; i < n; i++) {
		if (i < 32)
			assert_int_equal(event_n(ev[i]), i);
		else
			assert_true(event_n(ev[i]) > event_n(ev[i - 1]));
	}
	for (i = 0; i < n; i++)
		json_object_put(ev[i]);
	/* Keys 4..7 share the last key: four keys wait, each with its latest event. */
	while (got < 4 && late++ < 100) {
		int ms = qmp_server_next_timeout_ms(f->s);

		assert_true(ms >= 0 && ms <= 1000);
		poll(NULL, 0, ms);
		qmp_server_tick(f->s);
		n = read_events(f, fd, ev, 2048);
		for (i = 0; i < n; i++, got++) {
			int64_t v = event_n(ev[i]);

			last[v % 8 < 4 ? v % 8 : 3] = v;
			json_object_put(ev[i]);
		}
	}
	assert_int_equal(got, 4);
	assert_int_equal(last[0], 992);
	assert_int_equal(last[1], 993);
	assert_int_equal(last[2], 994);
	assert_int_equal(last[3], 999);
	assert_int_equal(qmp_server_next_timeout_ms(f->s), -1);
	unlink(path);
	close(fd);
}

static void test_event_without_listener(void **state)
{
	struct fixture *f = *state;

	/* No socket: the event is dropped, and data is freed (ASan checks the leak). */
	qmp_server_event(f->s, "TEST", json_object_new_object());
	qmp_server_event(f->s, "TEST2", NULL);
	assert_int_equal(qmp_server_clients(f->s), 0);
}

/* listen() as the server calls it: is the socket's public path there yet? */
/* Whether the server's fd is readable now: the main loop would call the dispatcher. */
static bool server_ready(struct qmp_server *s)
{
	struct pollfd p = { .fd = qmp_server_fd(s), .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

/*
 * A client that sends many requests at once gets QMP_PASS_REQUESTS of them run per
 * dispatch, another client its share in the same dispatch, and the rest of the first
 * one's input is run on the passes after, which the server asks for (its fd stays
 * readable) though the socket has nothing more to read.
 */
static void test_requests_per_pass_are_bounded(void **state)
{
	struct fixture *f = *state;
	static const char echo[] = "{\"execute\": \"echo\"}\n";
	char path[108], many[40 * sizeof(echo)] = "";
	int a = socket_client(f, path, sizeof(path)), b = qmp_test_client(f->s, path);
	unsigned i, passes = 0;
	char *out;

	qmp_test_negotiate(f->s, a);
	qmp_test_negotiate(f->s, b);
	for (i = 0; i < 40; i++)
		strcat(many, echo);
	assert_int_equal(send(a, many, strlen(many), 0), (ssize_t)strlen(many));
	assert_int_equal(send(b, echo, strlen(echo), 0), (ssize_t)strlen(echo));
	echo_calls = 0;
	qmp_server_dispatch(f->s);
	assert_int_equal(echo_calls, QMP_PASS_REQUESTS + 1);
	out = qmp_test_read(f->s, b); /* b's reply came in the first pass */
	assert_int_equal(qmp_test_count(out, "\"return\""), 1);
	/* The main loop's way: dispatch while the server's fd says there is work. */
	while (server_ready(f->s) && passes++ < 100)
		qmp_server_dispatch(f->s);
	assert_int_equal(echo_calls, 41);
	out = qmp_test_read(f->s, a);
	assert_int_equal(qmp_test_count(out, "\"return\""), 40);
	close(a);
	close(b);
	unlink(path);
}

static unsigned long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000 + (unsigned long long)ts.tv_nsec / 1000000;
}

/* A client connects to f->s; the server accepts it or not. Everything it got, up to EOF. */
static char *connect_when_full(struct fixture *f, const char *path, int *fd)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	*fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(*fd >= 0);
	assert_int_equal(connect(*fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	return qmp_test_read(f->s, *fd);
}

/*
 * With QMP_MAX_CLIENTS connected, a new client is refused while none has been idle for
 * QMP_IDLE_EVICT_MS; then it takes the place of the client idle longest, but never of one
 * still owed a reply.
 */
static void test_idle_client_makes_room(void **state)
{
	struct fixture *f = *state;
	static const char req[] = "{\"execute\": \"later\"}\n";
	static int fds[QMP_MAX_CLIENTS];
	char path[108], *out;
	unsigned long long first;
	unsigned i;
	int fd;

	later_server = f->s;
	later = NULL;
	fds[0] = socket_client(f, path, sizeof(path));
	first = mono_ms();
	qmp_test_negotiate(f->s, fds[0]);
	assert_int_equal(send(fds[0], req, strlen(req), 0), (ssize_t)strlen(req));
	qmp_test_read(f->s, fds[0]);
	assert_non_null(later); /* fds[0] is owed a reply */
	for (i = 1; i < QMP_MAX_CLIENTS; i++)
		fds[i] = qmp_test_client(f->s, path);
	assert_int_equal(qmp_server_clients(f->s), QMP_MAX_CLIENTS);
	out = connect_when_full(f, path, &fd);
	/* Only when the host ran this fast: the rule is about time, which it cannot stop. */
	if (mono_ms() - first < QMP_IDLE_EVICT_MS)
		assert_non_null(strstr(out, "too many clients"));
	close(fd);

	while (mono_ms() - first <= QMP_IDLE_EVICT_MS + 1)
		poll(NULL, 0, 10);
	out = connect_when_full(f, path, &fd);
	assert_non_null(strstr(out, "\"QMP\""));
	assert_int_equal(qmp_server_clients(f->s), QMP_MAX_CLIENTS);
	qmp_test_negotiate(f->s, fd);
	/* fds[1] made room, not fds[0], idle as long but owed a reply. */
	out = qmp_test_read(f->s, fds[1]);
	assert_non_null(strstr(out, "idle connection closed"));
	assert_int_equal(recv(fds[1], out, 1, MSG_DONTWAIT), 0);
	qmp_deferred_return(later, json_object_new_string("done"), NULL);
	out = qmp_test_read(f->s, fds[0]);
	assert_non_null(strstr(out, "\"done\""));
	for (i = 0; i < QMP_MAX_CLIENTS; i++)
		close(fds[i]);
	close(fd);
	unlink(path);
}

int __real_listen(int fd, int backlog);
int __wrap_listen(int fd, int backlog);
static const char *listen_watch; /* the path to look at, NULL: none */
static int listen_saw_path = -1; /* 1: the path existed when listen() was called */

int __wrap_listen(int fd, int backlog)
{
	if (listen_watch)
		listen_saw_path = access(listen_watch, F_OK) == 0;
	return __real_listen(fd, backlog);
}

/*
 * The socket's path appears only once the server listens: a client that waits for the file
 * and connects at once (the test suite's wait_socket(), plugvm-latency) was refused on a
 * loaded host in the window between bind() and listen().
 */
static void test_socket_path_appears_listening(void **state)
{
	struct fixture *f = *state;
	char path[108];
	int fd;

	snprintf(path, sizeof(path), "/tmp/plugvm-test-listen-%d.qmp", (int)getpid());
	unlink(path);
	listen_watch = path;
	assert_int_equal(qmp_server_listen(f->s, path), 0);
	listen_watch = NULL;
	assert_int_equal(listen_saw_path, 0);
	assert_int_equal(access(path, F_OK), 0);
	fd = qmp_test_client(f->s, path); /* connects: it is the listening socket */
	close(fd);
	{
		char tmp[128];

		snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
		assert_int_not_equal(access(tmp, F_OK), 0); /* the temporary name is gone */
	}
	unlink(path);
}

/*
 * Without a machine (-machine none), a command not marked QMP_CMD_NO_MACHINE is refused
 * before its arguments are looked at and without running; a marked one runs; negotiation
 * is unaffected. With the machine back, everything runs again.
 */
static void test_no_machine_refuses_unmarked_commands(void **state)
{
	struct fixture *f = *state;
	struct json_object *r;
	const char *d;

	qmp_server_set_no_machine(f->s, "no machine here");
	negotiate(f->c);
	d = expect_error(f->c, "{\"execute\": \"echo\", \"arguments\": {\"s\": \"x\"}}",
			 "GenericError");
	assert_string_equal(d, "no machine here");
	d = expect_error(f->c, "{\"execute\": \"need\", \"arguments\": {\"bogus\": 1}}",
			 "GenericError");
	assert_string_equal(d, "no machine here");
	assert_int_equal(echo_calls, 0);
	qmp_test_send(f->c, "{\"execute\": \"free\", \"arguments\": {\"s\": \"x\"}}");
	r = qmp_test_next_line(f->c);
	assert_string_equal(json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN),
			    "{\"return\":{\"s\":\"x\"}}");
	json_object_put(r);
	assert_int_equal(echo_calls, 1);
	assert_non_null(
	    strstr(expect_error(f->c, "{\"execute\": \"nope\"}", "CommandNotFound"), "nope"));
	qmp_server_set_no_machine(f->s, NULL);
	qmp_test_send(f->c, "{\"execute\": \"echo\"}");
	json_object_put(qmp_test_next_line(f->c));
	assert_int_equal(echo_calls, 2);
}

/*
 * Every line the server writes on a socket ends in CRLF: the greeting, replies, errors and
 * events (libvirt waits forever for a greeting ended by LF alone: spec §9.1). An event not
 * among the declared names still goes out, and the error log names it.
 */
static void test_every_line_ends_in_crlf(void **state)
{
	static const char reqs[] = "{\"execute\": \"qmp_capabilities\"}\n{\"execute\": \"echo\", "
				   "\"id\": 1}\n{\"execute\": \"nope\"}\nnot json\n";
	static const char *const names[] = { "KNOWN", NULL };
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct fixture *f = *state;
	struct unit_capture cap;
	char path[108], all[8192], log[512], *p;
	size_t len = 0;
	unsigned i, lines = 0;
	int fd;

	qmp_test_listen(f->s, "crlf", path, sizeof(path));
	qmp_server_set_event_names(f->s, names);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(send(fd, reqs, strlen(reqs), 0), (ssize_t)strlen(reqs));
	for (i = 0; i < 50; i++) {
		ssize_t n;

		qmp_server_dispatch(f->s);
		if (i == 25) {
			unit_capture_begin(&cap);
			qmp_server_event(f->s, "KNOWN", NULL);
			qmp_server_event(f->s, "UNDECLARED", NULL);
			unit_capture_end(&cap, log, sizeof(log));
		}
		n = recv(fd, all + len, sizeof(all) - len - 1, MSG_DONTWAIT);
		if (n > 0)
			len += (size_t)n;
	}
	all[len] = '\0';
	for (p = all; (p = strchr(p, '\n')); p++, lines++)
		assert_true(p > all && p[-1] == '\r');
	assert_int_equal(lines, 7); /* greeting, 4 answers, 2 events */
	assert_true(len > 2 && all[len - 2] == '\r' && all[len - 1] == '\n');
	assert_non_null(strstr(all, "\"event\":\"UNDECLARED\""));
	assert_non_null(strstr(log, "event UNDECLARED is missing"));
	assert_null(strstr(log, "KNOWN is missing"));
	close(fd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_greeting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket_path_appears_listening, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_negotiation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dispatch_and_ids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_argument_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_streaming, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_then_recovers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budgeted_input_answers_the_same, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_request_too_large, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_over_output_limit_is_dropped, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_guest_events_are_throttled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_throttled_events_keep_the_latest_per_key,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_without_listener, setup, teardown),
		cmocka_unit_test_setup_teardown(test_half_close_answers_everything, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_requests_per_pass_are_bounded, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_idle_client_makes_room, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_machine_refuses_unmarked_commands, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_every_line_ends_in_crlf, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
