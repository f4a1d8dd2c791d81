// SPDX-License-Identifier: MIT
/*
 * Unit tests for the host end of the agent channel and the QMP commands it answers
 * (vmm/control/: agent.c, control_agent.c, qmp_*.c), with the guest played from the host
 * side: its messages go to the agent's virtio_agent_ops as the virtio transmitq would hand them
 * over, and what the VMM sends it lands in a stub of virtio_agent_send(). Each test plays a
 * hostile guest or client (docs/security.md): clients that leave while their requests fail, a
 * guest repeating HELLO, CPU counts and event streams taken from the guest's word, and
 * guest strings that must reach clients as valid, control-free UTF-8.
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "tests/unit/vmm_shim/agent_states.h"
#include "tests/unit/vmm_shim/qmp_client.h"
#include "vmm/control/agent.h"
#include "vmm/control/control_agent.h"
#include "vmm/devices/virtio_console.h"
#include "vmm/control/qmp.h"
#include "vmm/vm.h"

#define MAX_CPUS 4
#define SENT_MAX 8192

/* ---- the guest's side ------------------------------------------------------------------ */

static struct {
	unsigned accept; /* messages the host ring still takes; then -EAGAIN (ring full) */
	unsigned nr; /* messages sent since the last reset */
	struct plugvm_agent_hdr hdr[SENT_MAX]; /* their headers (the first SENT_MAX) */
	struct plugvm_agent_msg last;
} sent;

int virtio_agent_send(struct vm *vm, const void *msg, size_t len)
{
	(void)vm;
	assert_int_equal(len, PLUGVM_AGENT_MSG_SIZE);
	if (!sent.accept)
		return -EAGAIN;
	sent.accept--;
	memcpy(&sent.last, msg, sizeof(sent.last));
	if (sent.nr < SENT_MAX)
		sent.hdr[sent.nr] = sent.last.hdr;
	sent.nr++;
	return 0;
}

static struct vm_config cfg = { .nr_cpus = 2, .max_cpus = MAX_CPUS };
static struct vm vm;
static int fake_virtio;
static struct virtio_agent_ops channel; /* what agent_init() set: the guest talks to it */

void virtio_agent_set_ops(struct vm *v, const struct virtio_agent_ops *ops)
{
	(void)v;
	channel = *ops;
}

/*
 * The main loop's agent_process() until nothing is queued, waiting between calls as it
 * does (agent_next_timeout_ms(): the budget's next period).
 */
static void main_loop_drain(void)
{
	struct agent_stats st;

	for (;;) {
		agent_process(&vm);
		agent_get_stats(&vm, &st);
		if (!st.queued)
			return;
		poll(NULL, 0, agent_next_timeout_ms(&vm));
	}
}

/* One message from the guest, handled by the main loop's agent_process(). */
static void guest_msg(uint16_t type, uint32_t flags, uint32_t id, int32_t status,
		      const void *payload, uint32_t len)
{
	struct plugvm_agent_msg m = { .hdr = { .magic = PLUGVM_AGENT_MAGIC,
					       .version = PLUGVM_AGENT_VERSION,
					       .type = type,
					       .id = id,
					       .status = status,
					       .len = len,
					       .flags = flags } };

	if (len)
		memcpy(m.payload, payload, len);
	channel.rx(channel.opaque, (const uint8_t *)&m, sizeof(m));
	main_loop_drain();
}

static void guest_hello(uint32_t nr_cpus)
{
	struct plugvm_agent_hello h = { .version = 1, .nr_cpus = nr_cpus, .nr_states = 3 };

	guest_msg(PLUGVM_AGENT_HELLO, PLUGVM_AGENT_F_EVENT, 0, 0, &h, sizeof(h));
}

/* The reply to the last request sent, with `len` bytes of payload. */
static void guest_reply(int32_t status, const void *payload, uint32_t len)
{
	guest_msg(sent.last.hdr.type, PLUGVM_AGENT_F_REPLY, sent.last.hdr.id, status, payload, len);
}

/* Answer LIST_STATES with a three-state table named `names`. */
static void guest_states(const char *const names[3])
{
	struct plugvm_agent_states st;

	assert_int_equal(sent.last.hdr.type, PLUGVM_AGENT_LIST_STATES);
	agent_states_fill(&st, names);
	guest_reply(0, &st, sizeof(st));
}

static const char *const plain_names[3] = { "offline", "work:prepare", "online" };

/* A guest agent that said hello and listed its states: the host is connected. */
static void guest_connect(uint32_t nr_cpus)
{
	guest_hello(nr_cpus);
	guest_states(plain_names);
	assert_true(agent_connected(&vm, NULL));
}

/* ---- the host's side ------------------------------------------------------------------- */

static int setup(void **state)
{
	(void)state;
	memset(&vm, 0, sizeof(vm));
	memset(&sent, 0, sizeof(sent));
	sent.accept = ~0u;
	vm.cfg = &cfg;
	vm.virtio = (struct virtio_devices *)&fake_virtio;
	assert_int_equal(agent_init(&vm), 0);
	vm.qmp = qmp_server_create(control_agent_commands, &vm, "plugvm test", 0, 2, 0);
	assert_non_null(vm.qmp);
	agent_set_event_fn(&vm, control_agent_event);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	agent_shutdown(&vm);
	qmp_server_destroy(vm.qmp);
	agent_exit(&vm);
	control_agent_free(&vm);
	return 0;
}

/* Run the server until it has no client left or `rounds` dispatches went by. */
static void dispatch_until_no_clients(unsigned rounds)
{
	while (rounds--) {
		struct pollfd p = { .fd = qmp_server_fd(vm.qmp), .events = POLLIN };

		poll(&p, 1, 10);
		qmp_server_dispatch(vm.qmp);
		agent_process(&vm);
		if (!qmp_server_clients(vm.qmp))
			return;
	}
}

/*
 * A client sends 2000 query-locks and closes its socket; the agent's ring
 * fills after a few, so the rest fail at once, inside the command, and the failure reply
 * finds the client gone. The server must not free the session under the command that is
 * still running in it (ASan: heap-use-after-free; release builds: SIGSEGV).
 */
static void test_client_gone_while_its_requests_fail(void **state)
{
	static const char req[] = "{\"execute\": \"query-locks\"}\n";
	char path[108], *batch;
	size_t i, n = 2000;
	int fd;

	(void)state;
	guest_connect(2);
	qmp_test_listen(vm.qmp, "agent", path, sizeof(path));
	fd = qmp_test_client(vm.qmp, path);
	/* The ring fills within the first pass's share (QMP_PASS_REQUESTS): the rest fail. */
	sent.accept = QMP_PASS_REQUESTS / 2;
	sent.nr = 0;
	batch = malloc(n * (sizeof(req) - 1) + 64);
	assert_non_null(batch);
	strcpy(batch, "{\"execute\": \"qmp_capabilities\"}\n");
	for (i = 0; i < n; i++)
		strcat(batch + strlen(batch), req);
	assert_int_equal(write(fd, batch, strlen(batch)), (ssize_t)strlen(batch));
	free(batch);
	close(fd);
	dispatch_until_no_clients(500);
	assert_int_equal(qmp_server_clients(vm.qmp), 0);
	assert_int_equal(sent.nr, QMP_PASS_REQUESTS / 2);
	unlink(path);
}

/* How many requests of `type` went to the guest since the last reset of `sent`. */
static unsigned sent_of(uint16_t type)
{
	unsigned i, n = 0;

	for (i = 0; i < sent.nr && i < SENT_MAX; i++)
		n += sent.hdr[i].type == type;
	return n;
}

/*
 * A guest repeating HELLO cannot make the VMM hold a refresh of the state table (a
 * request and a 4 KiB table kept up to 30 s) per HELLO: one refresh is in flight at a
 * time; HELLOs meanwhile ask for one more after it.
 */
static void test_hello_flood_refreshes_once(void **state)
{
	unsigned i;

	(void)state;
	guest_connect(2);
	sent.nr = 0;
	for (i = 0; i < 1000; i++)
		guest_hello(2);
	assert_int_equal(sent_of(PLUGVM_AGENT_LIST_STATES), 1);
	guest_states(plain_names); /* the one in flight; the HELLOs asked for one more */
	assert_int_equal(sent_of(PLUGVM_AGENT_LIST_STATES), 2);
	guest_states(plain_names);
	assert_int_equal(sent.nr, 2);
}

/*
 * Requests in flight are bounded whatever clients ask for while the guest
 * answers nothing; the rest fail at once with "try again".
 */
static void test_requests_in_flight_are_bounded(void **state)
{
	struct qmp_session *c;
	struct json_object *o;
	unsigned i, errors = 0;

	(void)state;
	guest_connect(2);
	c = qmp_test_session(vm.qmp);
	sent.nr = 0;
	for (i = 0; i < 2 * AGENT_MAX_PENDING; i++)
		qmp_test_send(c, "{\"execute\": \"query-locks\"}\n");
	assert_int_equal(sent.nr, AGENT_MAX_PENDING);
	while ((o = qmp_test_next_line(c))) {
		struct json_object *e, *d;

		assert_true(json_object_object_get_ex(o, "error", &e));
		assert_true(json_object_object_get_ex(e, "desc", &d));
		assert_contains(json_object_get_string(d), "try again");
		errors++;
		json_object_put(o);
	}
	assert_int_equal(errors, AGENT_MAX_PENDING);
	/* An answer makes room for the next request. */
	guest_reply(0, &(struct plugvm_agent_lock_stats){ .enabled = 1 },
		    sizeof(struct plugvm_agent_lock_stats));
	o = qmp_test_next_line(c);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "return", NULL));
	json_object_put(o);
	qmp_test_send(c, "{\"execute\": \"query-locks\"}\n");
	assert_int_equal(sent.nr, AGENT_MAX_PENDING + 1);
	assert_null(qmp_test_next_line(c));
	qmp_session_destroy(c);
}

/* The one reply line of session c, parsed (the caller puts it). */
static struct json_object *only_reply(struct qmp_session *c)
{
	struct json_object *o = qmp_test_next_line(c);

	assert_non_null(o);
	assert_null(qmp_test_next_line(c));
	return o;
}

/* Answer every TIMER_STATS request until the command replies; returns the requests. */
static unsigned answer_timer_stats(struct qmp_session *c, unsigned most)
{
	unsigned n = 0;
	size_t len;

	while (qmp_session_output(c, &len), !len && n < most) {
		struct plugvm_agent_timer_stats t = { .levels = 1 };

		assert_int_equal(sent.last.hdr.type, PLUGVM_AGENT_TIMER_STATS);
		memcpy(&t.cpu, sent.last.payload, sizeof(t.cpu));
		guest_reply(0, &t, sizeof(t));
		n++;
	}
	return n;
}

/*
 * query-timers over all CPUs walks at most the VM's own maxcpus CPUs, whatever nr_cpus the
 * guest says: 2^32 - 1 (or 0, which would wrap) does not make one query billions of
 * requests.
 */
static void test_per_cpu_walk_capped_by_the_vm(void **state)
{
	struct qmp_session *c;
	struct json_object *o, *ret;
	uint32_t lies[2] = { 0xffffffffu, 0 };
	unsigned i;

	(void)state;
	for (i = 0; i < 2; i++) {
		guest_hello(lies[i]);
		if (sent.last.hdr.type == PLUGVM_AGENT_LIST_STATES)
			guest_states(plain_names);
		c = qmp_test_session(vm.qmp);
		sent.nr = 0;
		qmp_test_send(c, "{\"execute\": \"query-timers\"}\n");
		assert_true(answer_timer_stats(c, 10 * MAX_CPUS) <= MAX_CPUS);
		o = only_reply(c);
		assert_true(json_object_object_get_ex(o, "return", &ret));
		assert_int_equal(json_object_array_length(ret), lies[i] ? MAX_CPUS : 0);
		json_object_put(o);
		/* One CPU: within the VM's CPUs, whatever the guest said. */
		qmp_test_send(c, "{\"execute\": \"query-sched\", \"arguments\": {\"cpu\": 4}}\n");
		o = only_reply(c);
		assert_true(json_object_object_get_ex(o, "error", NULL));
		json_object_put(o);
		qmp_session_destroy(c);
	}
}

/*
 * A cpuhp-set-target in flight (up to 120 s) keeps the STATE events of its CPU that a
 * transition can run, and counts the rest: a guest streaming them cannot grow it without
 * bound.
 */
static void test_target_keeps_a_bounded_states_list(void **state)
{
	struct plugvm_agent_ev_state ev = { .cpu = 1, .state = 1, .up = 0, .ns = 10 };
	struct plugvm_agent_target_done done = { .cpu = { .cpu = 1 }, .ns = 1000000 };
	struct qmp_session *c;
	struct json_object *o, *ret, *v;
	unsigned i;

	(void)state;
	guest_connect(2);
	c = qmp_test_session(vm.qmp);
	qmp_test_send(c, "{\"execute\": \"cpuhp-set-target\", "
			 "\"arguments\": {\"cpu\": 1, \"state\": \"offline\"}}\n");
	assert_int_equal(sent.last.hdr.type, PLUGVM_AGENT_SET_TARGET);
	for (i = 0; i < 20000; i++)
		guest_msg(PLUGVM_AGENT_EV_STATE, PLUGVM_AGENT_F_EVENT, 0, 0, &ev, sizeof(ev));
	guest_msg(PLUGVM_AGENT_SET_TARGET, PLUGVM_AGENT_F_REPLY, sent.last.hdr.id, 0, &done,
		  sizeof(done));
	o = only_reply(c);
	assert_true(json_object_object_get_ex(o, "return", &ret));
	assert_true(json_object_object_get_ex(ret, "states", &v));
	assert_true(json_object_array_length(v) <= 256);
	assert_true(json_object_object_get_ex(ret, "states-dropped", &v));
	assert_int_equal(json_object_get_int64(v) + 256, 20000);
	assert_true(json_object_object_get_ex(ret, "states-ns", &v));
	assert_int_equal(json_object_get_int64(v), 256 * 10);
	json_object_put(o);
	qmp_session_destroy(c);
}

/* The "name" of every entry of a query-cpuhp-states reply, in order. */
static void state_names(struct json_object *o, const char *names[3])
{
	struct json_object *ret, *n;
	size_t i;

	assert_true(json_object_object_get_ex(o, "return", &ret));
	assert_int_equal(json_object_array_length(ret), 3);
	for (i = 0; i < 3; i++) {
		assert_true(
		    json_object_object_get_ex(json_object_array_get_idx(ret, i), "name", &n));
		names[i] = json_object_get_string(n);
	}
}

/*
 * State and lock names come from the guest and may hold escape sequences for terminals, C1
 * controls and invalid UTF-8 (which strict JSON readers refuse): they are cleaned at the
 * agent boundary before any QMP client sees them: every byte of such a character becomes
 * '?'; valid, printable UTF-8 stays.
 */
static void test_guest_strings_reach_clients_clean(void **state)
{
	static const char *const hostile[3] = {
		"esc\x1b[2J\x07\x7f",
		"bad\xff\xfe\xc0\xafutf",
		"c1\xc2\x9b+caf\xc3\xa9+\xe2\x80\xae",
	};
	const char *names[3];
	struct qmp_session *c;
	struct json_object *o;
	char path[108];
	int fd;

	(void)state;
	guest_hello(2);
	guest_states(hostile);
	c = qmp_test_session(vm.qmp);
	qmp_test_send(c, "{\"execute\": \"query-cpuhp-states\"}\n");
	guest_states(hostile);
	o = only_reply(c);
	state_names(o, names);
	assert_string_equal(names[0], "esc?[2J??");
	assert_string_equal(names[1], "bad????utf");
	assert_string_equal(names[2], "c1??+caf\xc3\xa9+???");
	json_object_put(o);
	/* A state is still named as the clients see it. */
	qmp_test_send(c, "{\"execute\": \"cpuhp-fail\", "
			 "\"arguments\": {\"cpu\": 1, \"state\": \"bad????utf\"}}\n");
	assert_int_equal(sent.last.hdr.type, PLUGVM_AGENT_FAIL);
	guest_reply(0, NULL, 0);
	json_object_put(only_reply(c));
	qmp_session_destroy(c);

	/* A lock validator report, to a socket client. */
	qmp_test_listen(vm.qmp, "agent", path, sizeof(path));
	fd = qmp_test_client(vm.qmp, path);
	assert_int_equal(send(fd, "{\"execute\": \"qmp_capabilities\"}\n", 32, 0), 32);
	dispatch_until_no_clients(5);
	{
		struct plugvm_agent_ev_lockdep ev = { .type = 2, .cpu = 1 };
		static char buf[65536];
		ssize_t n, got = 0;
		unsigned i;

		memset(ev.lock, 0x9b, sizeof(ev.lock)); /* no NUL, and not UTF-8 */
		snprintf(ev.held, sizeof(ev.held), "rq\x1b]0;pwned\x07");
		guest_msg(PLUGVM_AGENT_EV_LOCKDEP, PLUGVM_AGENT_F_EVENT, 0, 0, &ev, sizeof(ev));
		for (i = 0; i < 50 && !strstr(buf, "GUEST_LOCKDEP_WARNING"); i++) {
			dispatch_until_no_clients(1);
			n = recv(fd, buf + got, sizeof(buf) - 1 - (size_t)got, MSG_DONTWAIT);
			if (n > 0)
				got += n;
			buf[got] = 0;
		}
		assert_contains(buf,
				"\"lock\":\"???????????????????????????????????????????????\"");
		assert_contains(buf, "\"held\":\"rq?]0;pwned?\"");
		assert_contains(buf, "\"type\":\"bad-release\",\"type-id\":2");
		for (i = 0; i < (unsigned)got; i++)
			assert_true((unsigned char)buf[i] < 0x80); /* nothing but ASCII was sent */
	}
	close(fd);
	unlink(path);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * A guest fills its transmitq with 1 MiB buffers of valid events. What the
 * queue cannot take is counted dropped; the main loop handles at most AGENT_BUDGET of the
 * rest per AGENT_PERIOD_MS (each agent_process() returns within one budget, so QMP and
 * signals get their turn) and is told when to come back; every queued event is handled.
 */
static void test_event_flood_is_handled_in_budgets(void **state)
{
	const unsigned nr = 10000, queue_max = 4096, periods = queue_max / AGENT_BUDGET;
	struct plugvm_agent_ev_state ev = { .cpu = 1, .state = 1, .up = 1 };
	struct plugvm_agent_msg *flood = calloc(nr, sizeof(*flood));
	struct agent_stats st;
	uint64_t events0, before, t0;
	unsigned i;

	(void)state;
	assert_non_null(flood);
	guest_connect(2);
	agent_get_stats(&vm, &st);
	events0 = st.events;
	for (i = 0; i < nr; i++) {
		flood[i].hdr = (struct plugvm_agent_hdr){ .magic = PLUGVM_AGENT_MAGIC,
							  .version = PLUGVM_AGENT_VERSION,
							  .type = PLUGVM_AGENT_EV_STATE,
							  .len = sizeof(ev),
							  .flags = PLUGVM_AGENT_F_EVENT };
		memcpy(flood[i].payload, &ev, sizeof(ev));
	}
	channel.rx(channel.opaque, (const uint8_t *)flood, nr * sizeof(*flood));
	free(flood);
	agent_get_stats(&vm, &st);
	assert_int_equal(st.dropped, nr - queue_max);
	t0 = mono_ns();
	for (;;) {
		before = st.events;
		agent_process(&vm);
		agent_get_stats(&vm, &st);
		assert_true(st.events - before <= AGENT_BUDGET);
		if (!st.queued)
			break;
		/* Left over the budget: the main loop is told when to come back. */
		assert_true(agent_next_timeout_ms(&vm) >= 0);
		assert_true(agent_next_timeout_ms(&vm) <= AGENT_PERIOD_MS + 1);
		poll(NULL, 0, agent_next_timeout_ms(&vm));
	}
	assert_int_equal(st.events - events0, queue_max);
	/* A budget per period: the last one starts `periods - 1` periods after the first. */
	assert_true(mono_ns() - t0 >= (uint64_t)(periods - 1) * AGENT_PERIOD_MS * 1000000ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_client_gone_while_its_requests_fail, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hello_flood_refreshes_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_requests_in_flight_are_bounded, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_per_cpu_walk_capped_by_the_vm, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_target_keeps_a_bounded_states_list, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_guest_strings_reach_clients_clean, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_event_flood_is_handled_in_budgets, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
