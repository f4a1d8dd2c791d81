// SPDX-License-Identifier: MIT
/*
 * plugctl's CPU commands over QEMU's shapes: cpus (query-hotpluggable-cpus with
 * query-cpus-fast's host threads), cpu add / cpu del (device_add / device_del, then the
 * guest's answer as an event: one wait-and-report shape for both) and cpu set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugctl.h"

struct slot {
	struct json_object *props;
	const char *type;
	const char *path; /* NULL: absent */
	int thread_id;
};

/* Slots ordered by index (query-hotpluggable-cpus lists them highest first). */
static struct json_object *slots_query(struct conn *c, struct slot **out, size_t *n)
{
	struct json_object *hp = conn_cmd(c, "query-hotpluggable-cpus", NULL);
	struct json_object *fast = conn_cmd(c, "query-cpus-fast", NULL);
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

int cmd_cpus(struct conn *c, char **argv)
{
	struct slot *s;
	size_t n, i, present = 0;
	struct json_object *hp = slots_query(c, &s, &n);

	(void)argv;
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
		printf("%zu of %zu CPU%s present\n", present, n, n == 1 ? "" : "s");
	}
	free(s);
	json_object_put(hp);
	return 0;
}

/*
 * A hotplug request and the guest's answer: send `command` with `args` (taken), wait for
 * the event `match` accepts. No answer in time: die with `late` (then " within N s").
 * With --json the event is printed here; the caller says in words what it means. Returns
 * the event (the caller puts it) and the time it took in *ms.
 */
static struct json_object *request_and_wait(struct conn *c, const char *command,
					    struct json_object *args,
					    bool (*match)(struct json_object *, void *), void *arg,
					    const char *late, int64_t *ms)
{
	int64_t t0 = now_ms();
	struct json_object *ev;

	json_object_put(conn_cmd(c, command, args));
	ev = conn_wait_event(c, match, arg);
	if (!ev)
		die(EXIT_NO, "%s within %d s", late, c->timeout_ms / 1000);
	*ms = now_ms() - t0;
	if (json_out)
		print_json(ev);
	return ev;
}

/* Hot-add `want` (-1: the lowest free slot) and wait until the guest has it online. */
static int cpu_add(struct conn *c, long want)
{
	static const char *const keys[] = { "socket-id", "die-id", "core-id", "thread-id" };
	struct slot *s;
	size_t n, i, k;
	struct json_object *hp = slots_query(c, &s, &n), *args, *ev, *info, *v;
	char id[32], slot[24], late[96];
	int64_t ms;
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
	snprintf(late, sizeof(late), "slot %ld: added, but the guest did not report", want);
	/* The slot's props as QEMU listed them, plus driver and id. */
	args = json_object_new_object();
	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (json_object_object_get_ex(s[want].props, keys[k], &v))
			json_object_object_add(args, keys[k], json_object_get(v));
	json_object_object_add(args, "driver", json_object_new_string(s[want].type));
	json_object_object_add(args, "id", json_object_new_string(id));
	free(s);
	json_object_put(hp);
	ev = request_and_wait(c, "device_add", args, match_ost, slot, late, &ms);
	json_object_object_get_ex(json_object_object_get(ev, "data"), "info", &info);
	status = get_int(info, "status", NULL);
	if (!json_out && !status)
		printf("cpu %ld added: online in the guest after %lld ms\n", want, (long long)ms);
	else if (!json_out)
		fprintf(stderr,
			"plugctl: cpu %ld added, but the guest could not use it (_OST "
			"status %d)\n",
			want, status);
	json_object_put(ev);
	return status ? EXIT_NO : 0;
}

/* Hot-remove the CPU in `want` and wait until the guest ejected it (or refused). */
static int cpu_del(struct conn *c, long want)
{
	struct slot *s;
	size_t n;
	struct json_object *hp = slots_query(c, &s, &n), *args, *ev;
	char path[256], late[96];
	int64_t ms;
	bool ok;

	if (want < 0 || (size_t)want >= n || !s[want].path)
		die(EXIT_NO, "no CPU in slot %ld", want);
	snprintf(path, sizeof(path), "%s", s[want].path);
	snprintf(late, sizeof(late), "cpu %ld: the guest did not eject it", want);
	free(s);
	json_object_put(hp);
	args = json_object_new_object();
	json_object_object_add(args, "id", json_object_new_string(path));
	ev = request_and_wait(c, "device_del", args, match_removed, path, late, &ms);
	ok = !strcmp(get_str(ev, "event", NULL), "DEVICE_DELETED");
	if (!json_out && ok)
		printf("cpu %ld removed after %lld ms\n", want, (long long)ms);
	else if (!json_out)
		fprintf(stderr,
			"plugctl: cpu %ld: the guest refused or did not finish its removal\n",
			want);
	json_object_put(ev);
	return ok ? 0 : EXIT_NO;
}

int cmd_cpu_add(struct conn *c, char **argv)
{
	return cpu_add(c, argv[0] ? parse_num(argv[0], "slot") : -1);
}

int cmd_cpu_del(struct conn *c, char **argv)
{
	return cpu_del(c, parse_num(argv[0], "slot"));
}

/* Add or remove (the highest) CPUs until `argv[0]` are present. */
int cmd_cpu_set(struct conn *c, char **argv)
{
	long want = parse_num(argv[0], "count");

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
				printf("%zu CPU%s present\n", present, present == 1 ? "" : "s");
			return 0;
		}
		st = present < (size_t)want ? cpu_add(c, -1) : cpu_del(c, last);
		if (st)
			return st;
	}
}
