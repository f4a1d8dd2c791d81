// SPDX-License-Identifier: MIT
/*
 * plugctl: the friendly client of plugvm's QMP control socket.
 *
 *   plugctl [-s PATH] [--json] [-t SECONDS] cpus | cpu add [SLOT] | cpu del SLOT |
 *           cpu set N | status | quit | qmp '{"execute": ...}'
 *
 * Human-readable output by default, the raw QMP values with --json; exit status 0 on
 * success, 1 when the VM or the guest says no, 2 on bad usage or no connection.
 */
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "vmm/utf8.h"
#include "vmm/version.h"

#define EXIT_NO	   1
#define EXIT_USAGE 2

static const char usage[] =
    "usage: plugctl [-s PATH] [--json] [-t SECONDS] COMMAND\n"
    "\n"
    "  cpus             every possible CPU: slot, topology, present or not, host thread\n"
    "  cpu add [SLOT]   hot-add a CPU (default: the lowest free slot); waits for the guest\n"
    "  cpu del SLOT     hot-remove the CPU in SLOT; waits for the guest to eject it\n"
    "  cpu set N        add or remove CPUs until N are present\n"
    "  states           the guest's cpuhp states: id, name, section, what they allow\n"
    "  cpuhp            every CPU's current and target cpuhp state\n"
    "  target CPU STATE move CPU to cpuhp STATE (name or id); prints each state's time\n"
    "  fail CPU STATE   fail STATE's callback in CPU's next transition (STATE none: clear)\n"
    "  timers [CPU]     timer wheel statistics per CPU and level\n"
    "  sched [CPU]      run-queue statistics per CPU\n"
    "  status           the VM's run state\n"
    "  quit             stop the VM\n"
    "  qmp JSON         send one QMP command as given, print the reply\n"
    "\n"
    "  -s, --socket PATH   the VM's QMP socket (default: $PLUGVM_QMP, else the only\n"
    "                      plugvm-*.qmp in $XDG_RUNTIME_DIR or /tmp)\n"
    "  -j, --json          print QMP values as JSON\n"
    "  -t, --timeout SECS  how long to wait for the guest (default 60)\n"
    "  -h, --help, -V, --version\n";

struct conn {
	int fd;
	char *buf;
	size_t len, cap;
	unsigned next_id;
	struct json_object *events; /* array of events seen while waiting for replies */
	int timeout_ms;
};

static bool json_out;

static void die(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/*
 * A string from the server as text for a terminal: what utf8_printable_len() refuses
 * (control characters, escape sequences, invalid UTF-8, bidi overrides) is shown as \xNN,
 * so that the guest, whose names the server passes on, cannot drive the terminal. The
 * result lives until 8 more calls; NULL gives "(null)", as printf would.
 */
static const char *tty(const char *s)
{
	static char bufs[8][1024];
	static unsigned next;
	char *out = bufs[next++ % 8];
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0, n;

	if (!s)
		return "(null)";
	n = strlen(s);
	while (i < n && o + 5 < sizeof(bufs[0])) {
		size_t len = utf8_printable_len(p + i, n - i);

		if (len && o + len < sizeof(bufs[0])) {
			memcpy(out + o, p + i, len);
			o += len;
			i += len;
		} else if (len) {
			break;
		} else {
			o += (size_t)snprintf(out + o, 5, "\\x%02x", p[i++]);
		}
	}
	out[o] = '\0';
	return out;
}

static void die(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("plugctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

static int64_t now_ms(void)
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
				die(EXIT_USAGE, "the server sent something that is not QMP");
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
			die(EXIT_NO, "the VM closed the connection");
		c->len += (size_t)n;
	}
}

/* Send {"execute": name, "arguments": args, "id": N}; return the reply (events kept). */
static struct json_object *execute(struct conn *c, const char *name, struct json_object *args)
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
		die(EXIT_NO, "cannot send to the VM: %s", strerror(errno));
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

/* The "return" value (a new reference), or exit with the error. */
static struct json_object *cmd(struct conn *c, const char *name, struct json_object *args)
{
	struct json_object *reply = execute(c, name, args), *ret, *err, *desc;

	if (json_object_object_get_ex(reply, "error", &err)) {
		json_object_object_get_ex(err, "desc", &desc);
		fprintf(stderr, "plugctl: %s: %s\n", name, tty(json_object_get_string(desc)));
		json_object_put(reply);
		exit(EXIT_NO);
	}
	json_object_object_get_ex(reply, "return", &ret);
	json_object_get(ret);
	json_object_put(reply);
	return ret;
}

/* Wait for an event accepted by `match` (taking it from those seen); NULL on timeout. */
static struct json_object *wait_event(struct conn *c, bool (*match)(struct json_object *, void *),
				      void *arg)
{
	int64_t deadline = now_ms() + c->timeout_ms;

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

static const char *get_str(struct json_object *o, const char *a, const char *b)
{
	struct json_object *x;

	if (!json_object_object_get_ex(o, a, &x))
		return NULL;
	if (b && !json_object_object_get_ex(x, b, &x))
		return NULL;
	return json_object_get_string(x);
}

static int get_int(struct json_object *o, const char *a, const char *b)
{
	struct json_object *x;

	if (!json_object_object_get_ex(o, a, &x))
		return -1;
	if (b && !json_object_object_get_ex(x, b, &x))
		return -1;
	return json_object_get_int(x);
}

static const char *default_socket(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("PLUGVM_QMP"), *dir = getenv("XDG_RUNTIME_DIR");
	const char *dirs[2] = { dir && *dir ? dir : "/tmp", "/tmp" };
	unsigned i;

	if (env && *env)
		return env;
	for (i = 0; i < 2; i++) {
		glob_t g;
		char pattern[PATH_MAX];

		snprintf(pattern, sizeof(pattern), "%s/plugvm-*.qmp", dirs[i]);
		if (glob(pattern, 0, NULL, &g) == 0) {
			if (g.gl_pathc > 1) {
				globfree(&g);
				die(EXIT_USAGE, "several VMs in %s: say which with -s PATH",
				    dirs[i]);
			}
			snprintf(path, sizeof(path), "%s", g.gl_pathv[0]);
			globfree(&g);
			return path;
		}
	}
	die(EXIT_USAGE, "no plugvm QMP socket found: start plugvm, or give -s PATH");
}

static void connect_vm(struct conn *c, const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct json_object *greeting, *ret;

	if (strlen(path) >= sizeof(addr.sun_path))
		die(EXIT_USAGE, "socket path too long: %s", path);
	strcpy(addr.sun_path, path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		die(EXIT_USAGE, "cannot connect to %s: %s", path, strerror(errno));
	c->events = json_object_new_array();
	greeting = recv_msg(c, now_ms() + c->timeout_ms);
	if (!greeting || !json_object_object_get_ex(greeting, "QMP", NULL))
		die(EXIT_USAGE, "%s does not speak QMP", path);
	json_object_put(greeting);
	ret = cmd(c, "qmp_capabilities", NULL);
	json_object_put(ret);
}

/*
 * QMP values as JSON. json-c escapes C0 controls but passes DEL, C1 controls, invalid UTF-8
 * and bidi overrides through; those only occur inside strings, where they become \uXXXX
 * (U+FFFD for bytes that are not UTF-8): still the same JSON value where it can be, and
 * nothing a terminal acts on.
 */
static void print_json(struct json_object *o)
{
	const unsigned char *p = (const unsigned char *)json_object_to_json_string_ext(
	    o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t i = 0, n = strlen((const char *)p);

	while (i < n) {
		size_t len = p[i] < 0x80 && p[i] != 0x7f ? 1 : utf8_printable_len(p + i, n - i);

		if (len) {
			fwrite(p + i, 1, len, stdout);
			i += len;
			continue;
		}
		/* A whole sequence that is well-formed but not printable keeps its code point. */
		if (p[i] == 0x7f) {
			fputs("\\u007f", stdout);
			i++;
		} else if (p[i] == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f) {
			printf("\\u%04x", p[i + 1]);
			i += 2;
		} else if (p[i] == 0xe2 && i + 2 < n && (p[i + 1] == 0x80 || p[i + 1] == 0x81) &&
			   (p[i + 2] & 0xc0) == 0x80) {
			printf("\\u%04x", 0x2000 | (p[i + 1] & 0x3f) << 6 | (p[i + 2] & 0x3f));
			i += 3;
		} else {
			fputs("\\ufffd", stdout);
			i++;
		}
	}
	putchar('\n');
}

/* ---- CPUs ------------------------------------------------------------------------------ */

struct slot {
	struct json_object *props;
	const char *type;
	const char *path; /* NULL: absent */
	int thread_id;
};

/* Slots ordered by index (query-hotpluggable-cpus lists them highest first). */
static struct json_object *slots_query(struct conn *c, struct slot **out, size_t *n)
{
	struct json_object *hp = cmd(c, "query-hotpluggable-cpus", NULL);
	struct json_object *fast = cmd(c, "query-cpus-fast", NULL);
	size_t i, k, len = json_object_array_length(hp);
	struct slot *s = calloc(len ? len : 1, sizeof(*s));

	if (!s)
		die(EXIT_USAGE, "out of memory");
	for (i = 0; i < len; i++) {
		struct json_object *e = json_object_array_get_idx(hp, len - 1 - i);

		json_object_object_get_ex(e, "props", &s[i].props);
		s[i].type = get_str(e, "type", NULL);
		s[i].path = get_str(e, "qom-path", NULL);
		s[i].thread_id = -1;
		for (k = 0; s[i].path && k < json_object_array_length(fast); k++) {
			struct json_object *f = json_object_array_get_idx(fast, k);
			const char *p = get_str(f, "qom-path", NULL);

			if (p && !strcmp(p, s[i].path))
				s[i].thread_id = get_int(f, "thread-id", NULL);
		}
	}
	json_object_put(fast);
	*out = s;
	*n = len;
	return hp; /* owns the strings */
}

static void cpus(struct conn *c)
{
	struct slot *s;
	size_t n, i, present = 0;
	struct json_object *hp = slots_query(c, &s, &n);

	if (json_out) {
		print_json(hp);
	} else {
		printf("%-5s %-7s %-7s %-7s %-8s %s\n", "slot", "socket", "core", "thread", "state",
		       "host thread");
		for (i = 0; i < n; i++) {
			present += s[i].path != NULL;
			printf("%-5zu %-7d %-7d %-7d %-8s ", i,
			       get_int(s[i].props, "socket-id", NULL),
			       get_int(s[i].props, "core-id", NULL),
			       get_int(s[i].props, "thread-id", NULL), s[i].path ? "present" : "-");
			if (s[i].thread_id > 0)
				printf("%d\n", s[i].thread_id);
			else
				printf("-\n");
		}
		printf("%zu of %zu CPUs present\n", present, n);
	}
	free(s);
	json_object_put(hp);
}

/* The guest's _OST for a device check (an insert) of slot `arg`. */
static bool match_ost(struct json_object *e, void *arg)
{
	struct json_object *info;
	const char *slot;

	if (strcmp(get_str(e, "event", NULL), "ACPI_DEVICE_OST") ||
	    !json_object_object_get_ex(json_object_object_get(e, "data"), "info", &info))
		return false;
	slot = get_str(info, "slot", NULL);
	return slot && get_int(info, "source", NULL) == 1 && !strcmp(slot, (const char *)arg);
}

static bool match_removed(struct json_object *e, void *arg)
{
	const char *ev = get_str(e, "event", NULL), *path = get_str(e, "data", "path");

	return ev && path && !strcmp(path, (const char *)arg) &&
	       (!strcmp(ev, "DEVICE_DELETED") || !strcmp(ev, "DEVICE_UNPLUG_GUEST_ERROR"));
}

static int cpu_add(struct conn *c, long want)
{
	struct slot *s;
	size_t n, i;
	struct json_object *hp = slots_query(c, &s, &n), *args, *ev, *info, *ret;
	char id[32], slot[24];
	int64_t t0;
	int status;

	if (want < 0) {
		for (i = 0; i < n && s[i].path; i++)
			;
		if (i == n)
			die(EXIT_NO, "every slot is taken (%zu CPUs)", n);
		want = (long)i;
	}
	if ((size_t)want >= n)
		die(EXIT_NO, "no slot %ld: the VM has %zu (maxcpus)", want, n);
	if (s[want].path)
		die(EXIT_NO, "slot %ld is taken", want);
	snprintf(id, sizeof(id), "cpu%ld", want);
	snprintf(slot, sizeof(slot), "%ld", want);
	/* The slot's props as QEMU listed them, plus driver and id. */
	args = json_object_new_object();
	{
		static const char *const keys[] = { "socket-id", "die-id", "core-id", "thread-id" };
		struct json_object *v;
		size_t k;

		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (json_object_object_get_ex(s[want].props, keys[k], &v))
				json_object_object_add(args, keys[k], json_object_get(v));
	}
	json_object_object_add(args, "driver", json_object_new_string(s[want].type));
	json_object_object_add(args, "id", json_object_new_string(id));
	free(s);
	json_object_put(hp);
	t0 = now_ms();
	ret = cmd(c, "device_add", args);
	json_object_put(ret);
	ev = wait_event(c, match_ost, slot);
	if (!ev)
		die(EXIT_NO, "slot %ld: added, but the guest did not report within %d s", want,
		    c->timeout_ms / 1000);
	json_object_object_get_ex(json_object_object_get(ev, "data"), "info", &info);
	status = get_int(info, "status", NULL);
	if (json_out)
		print_json(ev);
	else if (!status)
		printf("cpu %ld added: online in the guest after %lld ms\n", want,
		       (long long)(now_ms() - t0));
	else
		fprintf(stderr,
			"plugctl: cpu %ld added, but the guest could not use it (_OST "
			"status %d)\n",
			want, status);
	json_object_put(ev);
	return status ? EXIT_NO : 0;
}

static int cpu_del(struct conn *c, long want)
{
	struct slot *s;
	size_t n;
	struct json_object *hp = slots_query(c, &s, &n), *args, *ev, *ret;
	char path[256];
	int64_t t0;
	bool ok;

	if (want < 0 || (size_t)want >= n || !s[want].path)
		die(EXIT_NO, "no CPU in slot %ld", want);
	snprintf(path, sizeof(path), "%s", s[want].path);
	free(s);
	json_object_put(hp);
	args = json_object_new_object();
	json_object_object_add(args, "id", json_object_new_string(path));
	t0 = now_ms();
	ret = cmd(c, "device_del", args);
	json_object_put(ret);
	ev = wait_event(c, match_removed, path);
	if (!ev)
		die(EXIT_NO, "cpu %ld: the guest did not eject it within %d s", want,
		    c->timeout_ms / 1000);
	ok = !strcmp(get_str(ev, "event", NULL), "DEVICE_DELETED");
	if (json_out)
		print_json(ev);
	else if (ok)
		printf("cpu %ld removed after %lld ms\n", want, (long long)(now_ms() - t0));
	else
		fprintf(stderr,
			"plugctl: cpu %ld: the guest refused or did not finish its removal\n",
			want);
	json_object_put(ev);
	return ok ? 0 : EXIT_NO;
}

static int cpu_set(struct conn *c, long want)
{
	for (;;) {
		struct slot *s;
		size_t n, i, present = 0;
		struct json_object *hp = slots_query(c, &s, &n);
		long last = -1;
		int st;

		for (i = 0; i < n; i++) {
			if (s[i].path) {
				present++;
				last = (long)i;
			}
		}
		free(s);
		json_object_put(hp);
		if (want < 1 || (size_t)want > n)
			die(EXIT_NO, "cannot have %ld CPUs: 1 to %zu", want, n);
		if (present == (size_t)want) {
			if (!json_out)
				printf("%zu CPUs present\n", present);
			return 0;
		}
		st = present < (size_t)want ? cpu_add(c, -1) : cpu_del(c, last);
		if (st)
			return st;
	}
}

/* ---- the guest agent's cpuhp and statistics ---------------------------------------- */

static void states(struct conn *c)
{
	struct json_object *r = cmd(c, "query-cpuhp-states", NULL);
	size_t i;

	if (json_out) {
		print_json(r);
	} else {
		printf("%-4s %-24s %-9s %s\n", "id", "name", "section", "allows");
		for (i = 0; i < json_object_array_length(r); i++) {
			struct json_object *e = json_object_array_get_idx(r, i), *v;
			bool rest = json_object_object_get_ex(e, "can-rest", &v) &&
				    json_object_get_boolean(v);
			bool fail = json_object_object_get_ex(e, "can-fail", &v) &&
				    json_object_get_boolean(v);

			printf("%-4d %-24s %-9s %s%s%s\n", get_int(e, "id", NULL),
			       tty(get_str(e, "name", NULL)), tty(get_str(e, "section", NULL)),
			       rest ? "target" : "", rest && fail ? "," : "", fail ? "fail" : "");
		}
	}
	json_object_put(r);
}

static void cpuhp(struct conn *c)
{
	struct json_object *r = cmd(c, "query-cpuhp", NULL);
	size_t i;

	if (json_out) {
		print_json(r);
	} else {
		printf("%-5s %-8s %-24s %-24s %s\n", "cpu", "present", "state", "target", "note");
		for (i = 0; i < json_object_array_length(r); i++) {
			struct json_object *e = json_object_array_get_idx(r, i), *v;
			bool present = json_object_object_get_ex(e, "present", &v) &&
				       json_object_get_boolean(v);

			printf("%-5d %-8s %-24s %-24s", get_int(e, "cpu", NULL),
			       present ? "yes" : "no", tty(get_str(e, "state", NULL)),
			       tty(get_str(e, "target", NULL)));
			if (get_str(e, "fail", NULL))
				printf(" fail armed at %s", tty(get_str(e, "fail", NULL)));
			if (get_str(e, "failed-state", NULL))
				printf(" last failed at %s (%d)",
				       tty(get_str(e, "failed-state", NULL)),
				       get_int(e, "last-error", NULL));
			printf("\n");
		}
	}
	json_object_put(r);
}

/* A state argument: a number is an id, anything else a name. */
static struct json_object *state_arg(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s && !*end)
		return json_object_new_int((int)v);
	return json_object_new_string(s);
}

static int target(struct conn *c, long cpu, const char *state)
{
	struct json_object *args = json_object_new_object(), *r, *list;
	bool ok;
	size_t i;

	json_object_object_add(args, "cpu", json_object_new_int((int)cpu));
	json_object_object_add(args, "state", state_arg(state));
	r = cmd(c, "cpuhp-set-target", args);
	ok = json_object_object_get_ex(r, "success", &list) && json_object_get_boolean(list);
	if (json_out) {
		print_json(r);
	} else {
		json_object_object_get_ex(r, "states", &list);
		for (i = 0; i < json_object_array_length(list); i++) {
			struct json_object *e = json_object_array_get_idx(list, i), *ns;

			json_object_object_get_ex(e, "ns", &ns);
			printf("  %-4s %-24s %10.3f ms%s\n", tty(get_str(e, "direction", NULL)),
			       tty(get_str(e, "state", NULL)),
			       (double)json_object_get_int64(ns) / 1e6,
			       get_int(e, "result", NULL) ? "  failed" : "");
		}
		json_object_object_get_ex(r, "ns", &list);
		if (ok)
			printf("cpu %ld: %s -> %s in %.3f ms\n", cpu, tty(get_str(r, "from", NULL)),
			       tty(get_str(r, "state", NULL)),
			       (double)json_object_get_int64(list) / 1e6);
		else
			printf("cpu %ld: failed at %s (error %d), rolled back to %s in %.3f ms\n",
			       cpu, tty(get_str(r, "failed-state", NULL)),
			       get_int(r, "error", NULL), tty(get_str(r, "state", NULL)),
			       (double)json_object_get_int64(list) / 1e6);
	}
	json_object_put(r);
	return ok ? 0 : EXIT_NO;
}

static void fail(struct conn *c, long cpu, const char *state)
{
	struct json_object *args = json_object_new_object();

	json_object_object_add(args, "cpu", json_object_new_int((int)cpu));
	json_object_object_add(args, "state", state_arg(state));
	json_object_put(cmd(c, "cpuhp-fail", args));
	if (!json_out)
		printf("cpu %ld: %s%s\n", cpu,
		       strcmp(state, "none") ? "next transition fails at " : "no failure armed",
		       strcmp(state, "none") ? state : "");
}

static int64_t get_i64(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_int64(v) : 0;
}

static void timers(struct conn *c, long cpu)
{
	struct json_object *args = json_object_new_object(), *r;
	size_t i, l;

	if (cpu >= 0)
		json_object_object_add(args, "cpu", json_object_new_int((int)cpu));
	r = cmd(c, "query-timers", args);
	if (json_out) {
		print_json(r);
		json_object_put(r);
		return;
	}
	for (i = 0; i < json_object_array_length(r); i++) {
		struct json_object *e = json_object_array_get_idx(r, i), *lv;

		printf("cpu %d: ticks %lld, expiry passes %lld, callbacks %lld, remote %lld, "
		       "migrated in %lld\n",
		       get_int(e, "cpu", NULL), (long long)get_i64(e, "ticks"),
		       (long long)get_i64(e, "softirqs"), (long long)get_i64(e, "callbacks"),
		       (long long)get_i64(e, "remote-ops"), (long long)get_i64(e, "migrated-in"));
		printf("  %-5s %10s %10s %10s %12s %12s\n", "level", "added", "cancelled",
		       "expired", "late avg", "late max");
		json_object_object_get_ex(e, "levels", &lv);
		for (l = 0; l < json_object_array_length(lv); l++) {
			struct json_object *x = json_object_array_get_idx(lv, l);
			int64_t exp = get_i64(x, "expired");

			if (!get_i64(x, "added") && !exp)
				continue;
			printf("  %-5zu %10lld %10lld %10lld %12.2f %12lld\n", l,
			       (long long)get_i64(x, "added"), (long long)get_i64(x, "cancelled"),
			       (long long)exp,
			       exp ? (double)get_i64(x, "lateness-sum") / (double)exp : 0.0,
			       (long long)get_i64(x, "lateness-max"));
		}
	}
	printf("(lateness in ticks of %lld ns)\n",
	       json_object_array_length(r)
		   ? (long long)get_i64(json_object_array_get_idx(r, 0), "tick-ns")
		   : 0LL);
	json_object_put(r);
}

static void sched(struct conn *c, long cpu)
{
	struct json_object *args = json_object_new_object(), *r;
	size_t i;

	if (cpu >= 0)
		json_object_object_add(args, "cpu", json_object_new_int((int)cpu));
	r = cmd(c, "query-sched", args);
	if (json_out) {
		print_json(r);
		json_object_put(r);
		return;
	}
	printf("%-4s %10s %10s %10s %10s %8s %8s %10s %8s\n", "cpu", "switches", "preempt",
	       "wake-loc", "wake-rem", "mig-in", "mig-out", "idle", "ipis");
	for (i = 0; i < json_object_array_length(r); i++) {
		struct json_object *e = json_object_array_get_idx(r, i);

		printf(
		    "%-4d %10lld %10lld %10lld %10lld %8lld %8lld %10lld %8lld\n",
		    get_int(e, "cpu", NULL), (long long)get_i64(e, "switches"),
		    (long long)get_i64(e, "preemptions"), (long long)get_i64(e, "wakeups-local"),
		    (long long)get_i64(e, "wakeups-remote"), (long long)get_i64(e, "migrations-in"),
		    (long long)get_i64(e, "migrations-out"), (long long)get_i64(e, "idle-entries"),
		    (long long)get_i64(e, "resched-ipis"));
	}
	json_object_put(r);
}

static long parse_num(const char *s, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		die(EXIT_USAGE, "%s: '%s' is not a number", what, s);
	return v;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },  { "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' }, { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },	     { NULL, 0, NULL, 0 },
	};
	struct conn c = { .fd = -1, .timeout_ms = 60000 };
	const char *path = NULL, *verb, *what = "";
	int opt, status = 0;

	while ((opt = getopt_long(argc, argv, "+s:jt:hV", longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			path = optarg;
			break;
		case 'j':
			json_out = true;
			break;
		case 't':
			c.timeout_ms = (int)parse_num(optarg, "--timeout") * 1000;
			if (c.timeout_ms <= 0 || c.timeout_ms > 3600 * 1000)
				die(EXIT_USAGE, "--timeout: 1 to 3600 seconds");
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case 'V':
			printf("plugctl %s\n", PLUGVM_VERSION);
			return 0;
		default:
			fputs(usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	verb = argv[optind++];
#define ARGS_ARE(n) (argc - optind == (n))
	if (!strcmp(verb, "cpu")) {
		what = optind < argc ? argv[optind++] : "";
		if (!((!strcmp(what, "add") && (ARGS_ARE(0) || ARGS_ARE(1))) ||
		      (!strcmp(what, "del") && ARGS_ARE(1)) ||
		      (!strcmp(what, "set") && ARGS_ARE(1))))
			die(EXIT_USAGE, "cpu add [SLOT] | cpu del SLOT | cpu set N");
	} else if (!strcmp(verb, "qmp")) {
		if (!ARGS_ARE(1))
			die(EXIT_USAGE, "qmp takes one JSON argument");
	} else if (!strcmp(verb, "target") || !strcmp(verb, "fail")) {
		if (!ARGS_ARE(2))
			die(EXIT_USAGE, "%s CPU STATE", verb);
	} else if (!strcmp(verb, "timers") || !strcmp(verb, "sched")) {
		if (!ARGS_ARE(0) && !ARGS_ARE(1))
			die(EXIT_USAGE, "%s [CPU]", verb);
	} else if (strcmp(verb, "cpus") && strcmp(verb, "status") && strcmp(verb, "quit") &&
		   strcmp(verb, "states") && strcmp(verb, "cpuhp")) {
		die(EXIT_USAGE, "unknown command '%s' (see --help)", verb);
	} else if (!ARGS_ARE(0)) {
		die(EXIT_USAGE, "%s takes no argument", verb);
	}
	connect_vm(&c, path ? path : default_socket());

	if (!strcmp(verb, "cpus")) {
		cpus(&c);
	} else if (!strcmp(verb, "states")) {
		states(&c);
	} else if (!strcmp(verb, "cpuhp")) {
		cpuhp(&c);
	} else if (!strcmp(verb, "target")) {
		status = target(&c, parse_num(argv[optind], "cpu"), argv[optind + 1]);
	} else if (!strcmp(verb, "fail")) {
		fail(&c, parse_num(argv[optind], "cpu"), argv[optind + 1]);
	} else if (!strcmp(verb, "timers")) {
		timers(&c, optind < argc ? parse_num(argv[optind], "cpu") : -1);
	} else if (!strcmp(verb, "sched")) {
		sched(&c, optind < argc ? parse_num(argv[optind], "cpu") : -1);
	} else if (!strcmp(verb, "status")) {
		struct json_object *r = cmd(&c, "query-status", NULL);

		if (json_out)
			print_json(r);
		else
			printf("%s\n", tty(get_str(r, "status", NULL)));
		json_object_put(r);
	} else if (!strcmp(verb, "quit")) {
		json_object_put(cmd(&c, "quit", NULL));
		if (!json_out)
			printf("quit\n");
	} else if (!strcmp(verb, "qmp")) {
		struct json_object *req = json_tokener_parse(argv[optind]), *name, *args = NULL;
		struct json_object *reply;

		if (!req || !json_object_is_type(req, json_type_object) ||
		    !json_object_object_get_ex(req, "execute", &name) ||
		    !json_object_is_type(name, json_type_string))
			die(EXIT_USAGE, "qmp: expected {\"execute\": NAME, \"arguments\": {...}}");
		if (json_object_object_get_ex(req, "arguments", &args))
			json_object_get(args);
		reply = execute(&c, json_object_get_string(name), args);
		json_object_object_del(reply, "id");
		print_json(reply);
		status = json_object_object_get_ex(reply, "error", NULL) ? EXIT_NO : 0;
		json_object_put(reply);
		json_object_put(req);
	} else {
		if (!strcmp(what, "add"))
			status = cpu_add(&c, optind < argc ? parse_num(argv[optind], "slot") : -1);
		else if (!strcmp(what, "del"))
			status = cpu_del(&c, parse_num(argv[optind], "slot"));
		else
			status = cpu_set(&c, parse_num(argv[optind], "count"));
	}
	json_object_put(c.events);
	free(c.buf);
	close(c.fd);
	return status;
}
