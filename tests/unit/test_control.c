// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/control/control.c with a real QMP server and socket client: the vCPU
 * lifecycle's events as QMP events (their shapes, and the rate limit on those the guest
 * triggers at will), device_add / device_del's answers to what the lifecycle says, and
 * the commands libvirt sends a running domain (control_libvirt.c). The lifecycle (cpus.h) is a stub the test sets.
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include "tests/unit/vmm_shim/qmp_client.h"
#include "plugvm_abi.h"
#include "vmm/control/control.h"
#include "vmm/cpus.h"
#include "vmm/version.h"
#include "vmm/vm.h"

#define MAX_CPUS 4

/* ---- the vCPU lifecycle, as the test says ---------------------------------------------- */

static void (*event_fn)(void *opaque, const struct cpus_event *e);
static void *event_opaque;
static int add_result, removal_result;
static const char *ids[MAX_CPUS];

void cpus_set_event_fn(struct cpus *c, void (*fn)(void *opaque, const struct cpus_event *e),
		       void *opaque)
{
	(void)c;
	event_fn = fn;
	event_opaque = opaque;
}

enum cpus_run_state cpus_run_state(const struct cpus *c)
{
	(void)c;
	return CPUS_RUNNING;
}

int cpus_pause(struct cpus *c)
{
	(void)c;
	return 0;
}

bool cpus_resume(struct cpus *c)
{
	(void)c;
	return false;
}

bool cpus_present(const struct cpus *c, unsigned slot)
{
	(void)c;
	return slot < 2;
}

pid_t cpus_tid(const struct cpus *c, unsigned slot)
{
	(void)c;
	return (pid_t)(1000 + slot);
}

const char *cpus_id(const struct cpus *c, unsigned slot)
{
	(void)c;
	return slot < MAX_CPUS ? ids[slot] : NULL;
}

/* Real KVM vCPUs' statistics for query-stats (test_stats_from_kvm), -1 elsewhere. */
static int vcpu_fds[2] = { -1, -1 }, stats_fds[2] = { -1, -1 };

int cpus_stats_fd(const struct cpus *c, unsigned slot)
{
	(void)c;
	return slot < 2 ? stats_fds[slot] : -1;
}

int cpus_add(struct cpus *c, unsigned slot, const char *id)
{
	(void)c;
	(void)slot;
	(void)id;
	return add_result;
}

int cpus_request_removal(struct cpus *c, unsigned slot)
{
	(void)c;
	(void)slot;
	return removal_result;
}

static unsigned nmi_calls;

unsigned cpus_inject_nmi(struct cpus *c)
{
	(void)c;
	nmi_calls++;
	return 2;
}

/* ---- fixture -------------------------------------------------------------------------- */

static struct vm_config cfg = { .nr_cpus = 2,
				.max_cpus = MAX_CPUS,
				.qmp_fd = -1,
				.topo = {
				    .sockets = 1, .dies = 1, .cores = MAX_CPUS, .threads = 1 } };
static struct vm vm;
static char path[108];
static int client = -1;
static char fake_cpus; /* vm.cpus: the lifecycle above is a stub, any non-NULL pointer */

/* A VM as control_start() finds it: a machine unless `machine` is false (-machine none). */
static void start(bool machine)
{
	memset(&vm, 0, sizeof(vm));
	vm.kvm.dev_fd = vm.kvm.vm_fd = -1; /* no KVM of its own: query-kvm probes /dev/kvm */
	vm.cpus = machine ? (struct cpus *)(void *)&fake_cpus : NULL;
	memset(ids, 0, sizeof(ids));
	add_result = removal_result = 0;
	nmi_calls = 0;
	snprintf(path, sizeof(path), "/tmp/plugvm-test-control-%d.qmp", (int)getpid());
	cfg.qmp_path = path;
	vm.cfg = &cfg;
	assert_int_equal(control_start(&vm), 0);
	client = qmp_test_client(vm.qmp, path);
	qmp_test_negotiate(vm.qmp, client);
}

static int setup_no_machine(void **state)
{
	(void)state;
	event_fn = NULL;
	start(false);
	assert_null(event_fn); /* nothing was asked of the absent lifecycle */
	return 0;
}

static int setup(void **state)
{
	(void)state;
	start(true);
	assert_non_null(event_fn);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	close(client);
	control_stop(&vm, 0);
	control_free(&vm);
	return 0;
}

static void event(const struct cpus_event *e)
{
	event_fn(event_opaque, e);
}

static const char *execute(const char *req)
{
	assert_int_equal(send(client, req, strlen(req), 0), (ssize_t)strlen(req));
	return qmp_test_read(vm.qmp, client);
}

/* Each lifecycle event has its QMP shape (docs/qmp.md, "Events"). */
static void test_lifecycle_events_as_qmp(void **state)
{
	struct cpus_event ost = { .type = CPUS_EVENT_OST, .slot = 3, .ost_source = 1 };
	struct cpus_event online = { .type = CPUS_EVENT_REPORT,
				     .slot = 3,
				     .online = true,
				     .guest_ns = 77,
				     .requested = true,
				     .host_ns = 88 };
	struct cpus_event offline = { .type = CPUS_EVENT_REPORT, .slot = 3, .result = -16 };
	struct cpus_event deleted = { .type = CPUS_EVENT_DELETED, .slot = 3, .id = "cpu3" };
	struct cpus_event refused = { .type = CPUS_EVENT_UNPLUG_FAILED, .slot = 1 };
	const char *out;

	(void)state;
	event(&ost);
	event(&online);
	event(&offline);
	event(&deleted);
	event(&refused);
	out = qmp_test_read(vm.qmp, client);
	assert_contains(out, "{\"event\":\"ACPI_DEVICE_OST\",\"data\":{\"info\":{\"source\":1,"
			     "\"status\":0,\"slot\":\"3\",\"slot-type\":\"CPU\"}}");
	assert_contains(out, "{\"event\":\"PLUGVM_CPU_ONLINE\",\"data\":{\"slot\":3,\"result\":0,"
			     "\"guest-ns\":77,\"host-ns\":88}");
	assert_contains(out, "{\"event\":\"PLUGVM_CPU_OFFLINE\",\"data\":{\"slot\":3,"
			     "\"result\":-16,\"guest-ns\":0},");
	assert_contains(out, "{\"event\":\"DEVICE_DELETED\",\"data\":{\"device\":\"cpu3\","
			     "\"path\":\"/machine/peripheral/cpu3\"}");
	assert_contains(out, "{\"event\":\"DEVICE_UNPLUG_GUEST_ERROR\",\"data\":{\"path\":"
			     "\"/machine/unattached/device[1]\"}");
}

static void *vcpu_thread_rep_outsl(void *arg)
{
	struct cpus_event e = { .type = CPUS_EVENT_OST, .slot = 1, .ost_source = 3 };
	unsigned i;

	(void)arg;
	for (i = 0; i < 1024; i++)
		event(&e);
	return NULL;
}

/*
 * One `rep outsl` of 1024 words to the _OST port (command OST_STATUS) is 1024
 * ACPI_DEVICE_OST events: rate-limited for every client, at most the burst goes out now,
 * and the latest of the rest when the budget refills.
 */
static void test_ost_burst_is_rate_limited(void **state)
{
	struct timespec t0, t1;
	pthread_t t;
	unsigned n;
	double s;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(pthread_create(&t, NULL, vcpu_thread_rep_outsl, NULL), 0);
	pthread_join(t, NULL);
	n = qmp_test_count(qmp_test_read(vm.qmp, client), "ACPI_DEVICE_OST");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_true(n >= 1);
	assert_true(n <= 256 + 256 * s + 1); /* the burst, and the rate while this ran */
	assert_true(n < 1024);
}

/* device_add and device_del say in QEMU's words what the lifecycle refused. */
static void test_add_and_del_answers(void **state)
{
	static const char add[] = "{\"execute\": \"device_add\", \"arguments\": {\"driver\": "
				  "\"host-x86_64-cpu\", \"id\": \"cpu2\", \"socket-id\": 0, "
				  "\"core-id\": 2, \"thread-id\": 0}}\n";
	static const char del[] = "{\"execute\": \"device_del\", \"arguments\": {\"id\": "
				  "\"/machine/unattached/device[1]\"}}\n";
	static const struct {
		const char *req;
		int *result; /* what cpus_add() or cpus_request_removal() says */
		int value;
		const char *answer;
	} cases[] = {
		{ add, &add_result, 0, "{\"return\":{}}" },
		{ add, &add_result, -EEXIST, "CPU[2] with APIC ID 2 exists" },
		{ add, &add_result, -ESHUTDOWN, "the VM is shutting down" },
		{ add, &add_result, -ENOMEM, "cannot create vCPU 2: " },
		{ del, &removal_result, 0, "{\"return\":{}}" },
		{ del, &removal_result, -EALREADY, "is already in the process of unplug" },
		{ del, &removal_result, -EPERM, "Boot CPU is unpluggable" },
		{ del, &removal_result, -EOPNOTSUPP,
		  "acpi: device unplug request for not supported device type" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		*cases[i].result = cases[i].value;
		assert_contains(execute(cases[i].req), cases[i].answer);
	}
	/* Before the lifecycle is asked: the id and the device's name. */
	add_result = 0;
	ids[1] = "cpu2";
	assert_contains(execute(add), "Duplicate device ID 'cpu2'");
	assert_contains(
	    execute("{\"execute\": \"device_del\", \"arguments\": {\"id\": \"cpu3\"}}\n"),
	    "\"class\":\"DeviceNotFound\"");
}

/* inject-nmi asks the lifecycle once; an argument (QEMU's takes none) is refused unasked. */
static void test_inject_nmi(void **state)
{
	(void)state;
	assert_contains(execute("{\"execute\": \"inject-nmi\"}\n"), "{\"return\":{}}");
	assert_int_equal(nmi_calls, 1);
	assert_contains(
	    execute("{\"execute\": \"inject-nmi\", \"arguments\": {\"cpu-index\": 0}}\n"),
	    "Parameter 'cpu-index' is unexpected");
	assert_int_equal(nmi_calls, 1);
}

/* query-stats and query-stats-schemas in QEMU's shapes, from a real KVM VM and 2 vCPUs. */
static void test_stats_from_kvm(void **state)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC), i;
	const char *r;

	(void)state;
	if (kvm < 0 && errno == ENOENT) {
		/* A host without KVM (a kvm_pvm guest's own kernel): nothing to read stats of. */
		print_message("test_stats_from_kvm: skipped: this host has no /dev/kvm\n");
		skip();
	}
	assert_true(kvm >= 0);
	vm.kvm.vm_fd = ioctl(kvm, KVM_CREATE_VM, 0);
	assert_true(vm.kvm.vm_fd >= 0);
	for (i = 0; i < 2; i++) {
		vcpu_fds[i] = ioctl(vm.kvm.vm_fd, KVM_CREATE_VCPU, i);
		assert_true(vcpu_fds[i] >= 0);
		stats_fds[i] = ioctl(vcpu_fds[i], KVM_GET_STATS_FD, NULL);
		assert_true(stats_fds[i] >= 0);
	}
	r = execute("{\"execute\": \"query-stats\", \"arguments\": {\"target\": \"vcpu\", "
		    "\"providers\": [{\"provider\": \"kvm\", \"names\": [\"exits\"]}]}}\n");
	assert_contains(r, "{\"return\":[{\"provider\":\"kvm\",\"qom-path\":\"/machine/"
			   "unattached/device[0]\",\"stats\":[{\"name\":\"exits\",\"value\":0}]},"
			   "{\"provider\":\"kvm\",\"qom-path\":\"/machine/unattached/device[1]\"");
	r = execute("{\"execute\": \"query-stats\", \"arguments\": {\"target\": \"vcpu\", "
		    "\"vcpus\": [\"/machine/unattached/device[1]\"]}}\n");
	assert_contains(r, "device[1]");
	assert_true(strstr(r, "device[0]") == NULL);
	assert_contains(r, "\"name\":\"io_exits\"");
	assert_contains(execute("{\"execute\": \"query-stats\", \"arguments\": {\"target\": "
				"\"vm\"}}\n"),
			"{\"return\":[{\"provider\":\"kvm\",\"stats\":[");
	assert_contains(execute("{\"execute\": \"query-stats-schemas\"}\n"),
			"\"target\":\"vcpu\",\"stats\":[");
	assert_contains(execute("{\"execute\": \"query-stats-schemas\"}\n"),
			"{\"name\":\"exits\",\"type\":\"cumulative\",\"base\":10,\"exponent\":0}");
	/* Bad requests: clear errors. */
	assert_contains(execute("{\"execute\": \"query-stats\", \"arguments\": {\"target\": "
				"\"cryptodev\"}}\n"),
			"does not accept value 'cryptodev'");
	assert_contains(execute("{\"execute\": \"query-stats\", \"arguments\": {\"target\": "
				"\"vm\", \"providers\": [{\"provider\": \"blk\"}]}}\n"),
			"does not accept value 'blk'");
	assert_contains(execute("{\"execute\": \"query-stats\", \"arguments\": {\"target\": "
				"\"vm\", \"vcpus\": []}}\n"),
			"applies to target 'vcpu'");
	assert_contains(execute("{\"execute\": \"query-stats\", \"arguments\": {\"target\": "
				"\"vm\", \"providers\": [{\"provider\": \"kvm\", \"names\": "
				"[1]}]}}\n"),
			"expects strings");
	assert_contains(execute("{\"execute\": \"query-stats\"}\n"), "target");
	for (i = 0; i < 2; i++) {
		close(stats_fds[i]);
		close(vcpu_fds[i]);
		vcpu_fds[i] = stats_fds[i] = -1;
	}
	close(vm.kvm.vm_fd);
	close(kvm);
}

/* ACPI_DEVICE_OST names the device as QEMU's ACPIOSTInfo does, when the slot holds one. */
static void test_ost_names_the_device(void **state)
{
	struct cpus_event ost = { .type = CPUS_EVENT_OST, .slot = 1, .id = "vcpu1" };

	(void)state;
	event(&ost);
	assert_contains(qmp_test_read(vm.qmp, client),
			"{\"event\":\"ACPI_DEVICE_OST\",\"data\":{\"info\":{\"device\":\"vcpu1\","
			"\"source\":0,\"status\":0,\"slot\":\"1\",\"slot-type\":\"CPU\"}}");
}

/*
 * plugvm never migrates: one capability, "events", whose state is kept and read back; an
 * unknown one or a malformed list changes nothing.
 */
static void test_migrate_capabilities(void **state)
{
	static const char query[] = "{\"execute\": \"query-migrate-capabilities\"}\n";

	(void)state;
	assert_contains(execute(query),
			"{\"return\":[{\"capability\":\"events\",\"state\":false}]}");
	assert_contains(execute("{\"execute\": \"migrate-set-capabilities\", \"arguments\": "
				"{\"capabilities\": [{\"capability\": \"events\", \"state\": "
				"true}]}}\n"),
			"{\"return\":{}}");
	assert_contains(execute(query),
			"{\"return\":[{\"capability\":\"events\",\"state\":true}]}");
	assert_contains(execute("{\"execute\": \"migrate-set-capabilities\", \"arguments\": "
				"{\"capabilities\": [{\"capability\": \"events\", \"state\": "
				"false}, {\"capability\": \"xbzrle\", \"state\": true}]}}\n"),
			"Migration capability 'xbzrle' is not supported");
	assert_contains(execute("{\"execute\": \"migrate-set-capabilities\", \"arguments\": "
				"{\"capabilities\": [{\"capability\": \"events\"}]}}\n"),
			"each entry takes a string 'capability' and a boolean 'state'");
	assert_contains(execute("{\"execute\": \"migrate-set-capabilities\", \"arguments\": "
				"{\"capabilities\": [7]}}\n"),
			"\"class\":\"GenericError\"");
	assert_contains(execute("{\"execute\": \"migrate-set-capabilities\"}\n"), "capabilities");
	assert_contains(execute(query), "\"state\":true}]}"); /* the refusals changed nothing */
}

/* query-chardev: the front end's devices, or plugvm's own QMP socket and console. */
static void test_chardevs(void **state)
{
	char want[512];

	(void)state;
	snprintf(want, sizeof(want),
		 "{\"return\":[{\"label\":\"compat_monitor0\",\"filename\":\"unix:%s,server=on\","
		 "\"frontend-open\":true},{\"label\":\"serial0\",\"filename\":\"stdio\","
		 "\"frontend-open\":true}]}",
		 path);
	assert_contains(execute("{\"execute\": \"query-chardev\"}\n"), want);
	cfg.nr_chardevs = 2;
	cfg.chardevs[0] = (struct config_chardev){ "charmonitor", "unix:/run/m.sock,server=on" };
	cfg.chardevs[1] = (struct config_chardev){ "charserial0", "pty:/dev/pts/7" };
	assert_contains(execute("{\"execute\": \"query-chardev\"}\n"),
			"{\"return\":[{\"label\":\"charmonitor\",\"filename\":\"unix:/run/m.sock,"
			"server=on\",\"frontend-open\":true},{\"label\":\"charserial0\","
			"\"filename\":\"pty:/dev/pts/7\",\"frontend-open\":true}]}");
	cfg.nr_chardevs = 0;
	cfg.chardevs[0] = cfg.chardevs[1] = (struct config_chardev){ NULL, NULL };
}

/* qom-list: the hot-added vCPUs under /machine/peripheral; any other path is not found. */
static void test_qom_list_and_empty_lists(void **state)
{
	static const char peripheral[] = "{\"execute\": \"qom-list\", \"arguments\": "
					 "{\"path\": \"/machine/peripheral\"}}\n";

	(void)state;
	assert_contains(execute(peripheral),
			"{\"return\":[{\"name\":\"type\",\"type\":\"string\"}]}");
	ids[1] = "vcpu1";
	ids[3] = "vcpu3"; /* not present (the stub's slots 0 and 1 are): not listed */
	assert_contains(execute(peripheral),
			"{\"return\":[{\"name\":\"type\",\"type\":\"string\"},{\"name\":\"vcpu1\","
			"\"type\":\"child<host-x86_64-cpu>\"}]}");
	assert_contains(execute("{\"execute\": \"qom-list\", \"arguments\": {\"path\": "
				"\"/machine/unattached/device[0]\"}}\n"),
			"\"class\":\"DeviceNotFound\"");
	assert_contains(execute("{\"execute\": \"qom-list\"}\n"), "path");
	assert_contains(execute("{\"execute\": \"query-block\"}\n"), "{\"return\":[]}");
	assert_contains(execute("{\"execute\": \"query-jobs\"}\n"), "{\"return\":[]}");
	assert_contains(execute("{\"execute\": \"query-named-block-nodes\", \"arguments\": "
				"{\"flat\": true}}\n"),
			"{\"return\":[]}");
}

/* qom-get: a present CPU's ID properties by its qom-path; others as QEMU refuses them. */
static void test_qom_get(void **state)
{
	(void)state;
	ids[1] = "vcpu1";
	assert_contains(execute("{\"execute\": \"qom-get\", \"arguments\": {\"path\": "
				"\"/machine/unattached/device[0]\", \"property\": \"apic-id\"}}\n"),
			"{\"return\":0}");
	assert_contains(execute("{\"execute\": \"qom-get\", \"arguments\": {\"path\": "
				"\"/machine/peripheral/vcpu1\", \"property\": \"apic-id\"}}\n"),
			"{\"return\":1}");
	assert_contains(execute("{\"execute\": \"qom-get\", \"arguments\": {\"path\": "
				"\"/machine/peripheral/vcpu1\", \"property\": \"die-id\"}}\n"),
			"{\"return\":0}");
	/* vCPU 1 has an id: its unattached path is not its path. */
	assert_contains(execute("{\"execute\": \"qom-get\", \"arguments\": {\"path\": "
				"\"/machine/unattached/device[1]\", \"property\": \"apic-id\"}}\n"),
			"\"class\":\"DeviceNotFound\"");
	assert_contains(
	    execute("{\"execute\": \"qom-get\", \"arguments\": {\"path\": "
		    "\"/machine/unattached/device[0]\", \"property\": \"migratable\"}}\n"),
	    "\"desc\":\"Property 'host-x86_64-cpu.migratable' not found\"");
	assert_contains(execute("{\"execute\": \"qom-get\", \"arguments\": {\"path\": "
				"\"/machine/unattached/device[3]\", \"property\": \"apic-id\"}}\n"),
			"\"class\":\"DeviceNotFound\"");
	assert_contains(execute("{\"execute\": \"qom-get\", \"arguments\": {\"path\": "
				"\"/machine/unattached/device[0]\"}}\n"),
			"property");
	ids[1] = NULL;
}

/*
 * set-action changes the VM's actions (from the config's), all or nothing; what plugvm
 * cannot do is refused. A guest powered off under -no-shutdown needs a reset before cont.
 */
static void test_set_action(void **state)
{
	(void)state;
	assert_int_equal(vm.on_poweroff, ACTION_EXIT);
	assert_contains(execute("{\"execute\": \"set-action\", \"arguments\": {\"shutdown\": "
				"\"pause\", \"reboot\": \"reset\", \"panic\": \"shutdown\"}}\n"),
			"{\"return\":{}}");
	assert_int_equal(vm.on_poweroff, ACTION_PAUSE);
	assert_int_equal(vm.on_reset, ACTION_RESET);
	assert_contains(execute("{\"execute\": \"set-action\", \"arguments\": {\"shutdown\": "
				"\"poweroff\", \"panic\": \"pause\"}}\n"),
			"panic 'pause' is not supported");
	assert_contains(execute("{\"execute\": \"set-action\", \"arguments\": {\"reboot\": "
				"\"shutdown\", \"watchdog\": \"reset\"}}\n"),
			"no watchdog device");
	assert_contains(execute("{\"execute\": \"set-action\", \"arguments\": {\"shutdown\": "
				"\"halt\"}}\n"),
			"Parameter 'shutdown' does not accept value 'halt'");
	assert_int_equal(vm.on_poweroff, ACTION_PAUSE); /* refusals changed nothing */
	assert_int_equal(vm.on_reset, ACTION_RESET);
	assert_contains(execute("{\"execute\": \"set-action\", \"arguments\": {\"reboot\": "
				"\"shutdown\"}}\n"),
			"{\"return\":{}}");
	assert_int_equal(vm.on_reset, ACTION_EXIT);
	assert_int_equal(vm.on_poweroff, ACTION_PAUSE);
	vm.powered_off = true;
	assert_contains(execute("{\"execute\": \"query-status\"}\n"), "\"status\":\"shutdown\"");
	assert_contains(execute("{\"execute\": \"cont\"}\n"),
			"Resetting the Virtual Machine is required");
	vm.powered_off = false;
}

/* ---- what plugvm says about itself (control_probe.c) ------------------------------------ */

/* The reply to `req`, parsed; the caller puts it. */
static struct json_object *reply(const char *req)
{
	struct json_object *o = json_tokener_parse(execute(req));

	assert_non_null(o);
	return o;
}

/* r's "return" (borrowed from r). */
static struct json_object *ret_of(struct json_object *r)
{
	struct json_object *v;

	if (!json_object_object_get_ex(r, "return", &v))
		fail_msg("no return in %s", json_object_to_json_string(r));
	return v;
}

static const char *str_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

/* The entry of array `a` whose "name" is `name`, or NULL. */
static struct json_object *named(struct json_object *a, const char *name)
{
	size_t i;

	for (i = 0; i < json_object_array_length(a); i++) {
		const char *n = str_of(json_object_array_get_idx(a, i), "name");

		if (n && !strcmp(n, name))
			return json_object_array_get_idx(a, i);
	}
	return NULL;
}

/* query-version and the greeting: QEMU 7.2.0's interface, plugvm's name in `package`. */
static void test_version_is_the_qemu_interface(void **state)
{
	struct json_object *r = reply("{\"execute\": \"query-version\"}\n");

	(void)state;
	assert_string_equal(
	    json_object_to_json_string_ext(ret_of(r), JSON_C_TO_STRING_PLAIN),
	    "{\"qemu\":{\"micro\":0,\"minor\":2,\"major\":7},\"package\":\"plugvm " PLUGVM_VERSION
	    "\"}");
	json_object_put(r);
}

/*
 * KVM's own answer, read here apart from plugvm: the vCPU limit, capped by plugvm's;
 * plugvm's alone on a host without /dev/kvm.
 */
static unsigned kvm_cpu_max(void)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC), n;

	if (kvm < 0 && errno == ENOENT)
		return PLUGVM_MAX_CPUS;
	assert_true(kvm >= 0);
	n = ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
	if (n <= 0)
		n = ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_NR_VCPUS);
	close(kvm);
	assert_true(n > 0);
	return (unsigned)n < PLUGVM_MAX_CPUS ? (unsigned)n : PLUGVM_MAX_CPUS;
}

/* query-target, query-kvm and query-machines say what this host and plugvm are. */
static void test_target_kvm_and_machines(void **state)
{
	struct json_object *r = reply("{\"execute\": \"query-kvm\"}\n"), *m, *pc, *q35, *none;
	const char *kvm = "{\"enabled\":false,\"present\":false}"; /* no /dev/kvm */

	(void)state;
	if (access("/dev/kvm", R_OK | W_OK) == 0)
		kvm = "{\"enabled\":true,\"present\":true}";
	else if (access("/dev/kvm", F_OK) == 0)
		kvm = "{\"enabled\":false,\"present\":true}";
	assert_string_equal(json_object_to_json_string_ext(ret_of(r), JSON_C_TO_STRING_PLAIN), kvm);
	json_object_put(r);
	assert_contains(execute("{\"execute\": \"query-target\"}\n"),
			"{\"return\":{\"arch\":\"x86_64\"}}");
	r = reply("{\"execute\": \"query-machines\"}\n");
	m = ret_of(r);
	assert_int_equal(json_object_array_length(m), 3);
	pc = named(m, "pc-i440fx-7.2");
	q35 = named(m, "pc-q35-7.2");
	none = named(m, "none");
	assert_non_null(pc);
	assert_non_null(q35);
	assert_non_null(none);
	assert_string_equal(str_of(pc, "alias"), "pc");
	assert_string_equal(str_of(q35, "alias"), "q35");
	assert_string_equal(str_of(pc, "is-default"), "true");
	assert_null(str_of(q35, "is-default"));
	assert_int_equal(atoi(str_of(pc, "cpu-max")), kvm_cpu_max());
	assert_int_equal(atoi(str_of(q35, "cpu-max")), kvm_cpu_max());
	assert_string_equal(str_of(q35, "hotpluggable-cpus"), "true");
	assert_string_equal(str_of(pc, "numa-mem-supported"), "false");
	assert_string_equal(str_of(pc, "deprecated"), "false");
	assert_string_equal(str_of(pc, "default-cpu-type"), "host-x86_64-cpu");
	assert_string_equal(str_of(pc, "default-ram-id"), "pc.ram");
	assert_string_equal(str_of(none, "cpu-max"), "0");
	assert_string_equal(str_of(none, "hotpluggable-cpus"), "false");
	json_object_put(r);
	assert_contains(execute("{\"execute\": \"query-command-line-options\"}\n"),
			"{\"return\":[]}");
}

/* plugvm's QOM types, their filters, and each command's answer for types it lacks. */
static void test_qom_types_and_properties(void **state)
{
	struct json_object *r = reply("{\"execute\": \"qom-list-types\"}\n"), *t;
	size_t i;

	(void)state;
	t = ret_of(r);
	for (i = 0; i < json_object_array_length(t); i++)
		assert_null(str_of(json_object_array_get_idx(t, i), "abstract"));
	assert_non_null(named(t, "isa-serial"));
	assert_non_null(named(t, "kvm-accel"));
	assert_non_null(named(t, "pc-i440fx-7.2-machine"));
	assert_null(named(t, "machine")); /* abstract */
	assert_null(named(t, "tcg-accel")); /* listing it would make libvirt probe with TCG */
	assert_string_equal(str_of(named(t, "host-x86_64-cpu"), "parent"), "x86_64-cpu");
	json_object_put(r);
	r = reply("{\"execute\": \"qom-list-types\", \"arguments\": {\"implements\": "
		  "\"machine\", \"abstract\": true}}\n");
	t = ret_of(r);
	assert_int_equal(json_object_array_length(t), 4);
	assert_string_equal(str_of(named(t, "machine"), "abstract"), "true");
	assert_non_null(named(t, "none-machine"));
	json_object_put(r);
	assert_contains(execute("{\"execute\": \"qom-list-types\", \"arguments\": {\"implements\": "
				"\"no-such-type\"}}\n"),
			"{\"return\":[]}");

	assert_contains(execute("{\"execute\": \"device-list-properties\", \"arguments\": "
				"{\"typename\": \"host-x86_64-cpu\"}}\n"),
			"{\"name\":\"socket-id\",\"type\":\"int32\"},{\"name\":\"die-id\",\"type\":"
			"\"int32\"},{\"name\":\"core-id\",\"type\":\"int32\"},{\"name\":\"thread-"
			"id\",\"type\":\"int32\"}");
	assert_contains(
	    execute("{\"execute\": \"device-list-properties\", \"arguments\": "
		    "{\"typename\": \"virtio-blk-pci\"}}\n"),
	    "{\"class\":\"DeviceNotFound\",\"desc\":\"Device 'virtio-blk-pci' not found");
	assert_contains(execute("{\"execute\": \"device-list-properties\", \"arguments\": "
				"{\"typename\": \"kvm-accel\"}}\n"),
			"Parameter 'typename' expects device");
	assert_contains(execute("{\"execute\": \"device-list-properties\", \"arguments\": "
				"{\"typename\": \"cpu\"}}\n"),
			"Parameter 'typename' expects non-abstract device");
	/* Never DeviceNotFound here: libvirt 9.0 crashes on it (spec §9.2 item 9). */
	assert_contains(execute("{\"execute\": \"qom-list-properties\", \"arguments\": "
				"{\"typename\": \"memory-backend-file\"}}\n"),
			"{\"return\":[]}");
	assert_contains(execute("{\"execute\": \"qom-list-properties\", \"arguments\": "
				"{\"typename\": \"none-machine\"}}\n"),
			"{\"return\":[]}");
	assert_contains(execute("{\"execute\": \"qom-list-properties\", \"arguments\": "
				"{\"typename\": \"memory-backend-ram\"}}\n"),
			"{\"return\":[{\"name\":\"size\",\"type\":\"int\"}]}");
}

/*
 * query-qmp-schema is the command table: the commands query-commands lists and no other,
 * each argument object resolvable with its members' types and optional marks, the events.
 */
static void test_schema_is_the_command_table(void **state)
{
	struct json_object *cr = reply("{\"execute\": \"query-commands\"}\n");
	struct json_object *sr = reply("{\"execute\": \"query-qmp-schema\"}\n"), *cmds, *schema;
	struct json_object *o, *members;
	size_t i, nr_commands = 0;

	(void)state;
	cmds = ret_of(cr);
	schema = ret_of(sr);
	for (i = 0; i < json_object_array_length(schema); i++) {
		struct json_object *e = json_object_array_get_idx(schema, i);
		const char *meta = str_of(e, "meta-type"), *ref;

		assert_non_null(str_of(e, "name"));
		assert_non_null(meta);
		/* Names are unique: libvirt keys a hash table by them. */
		assert_ptr_equal(named(schema, str_of(e, "name")), e);
		ref = str_of(e, !strcmp(meta, "array") ? "element-type" : "arg-type");
		if (ref) /* every type an entry names is there */
			assert_non_null(named(schema, ref));
		if (!strcmp(meta, "command")) {
			nr_commands++;
			assert_non_null(named(cmds, str_of(e, "name")));
			assert_non_null(named(schema, str_of(e, "ret-type")));
		}
	}
	assert_int_equal(nr_commands, json_object_array_length(cmds));
	o = named(schema, str_of(named(schema, "device_add"), "arg-type"));
	assert_string_equal(str_of(o, "meta-type"), "object");
	assert_true(json_object_object_get_ex(o, "members", &members));
	assert_string_equal(
	    json_object_to_json_string_ext(named(members, "driver"), JSON_C_TO_STRING_PLAIN),
	    "{\"name\":\"driver\",\"type\":\"str\"}");
	assert_string_equal(
	    json_object_to_json_string_ext(named(members, "core-id"), JSON_C_TO_STRING_PLAIN),
	    "{\"name\":\"core-id\",\"type\":\"int\",\"default\":null}");
	assert_string_equal(str_of(named(schema, "DEVICE_DELETED"), "meta-type"), "event");
	assert_string_equal(str_of(named(schema, "query-status"), "arg-type"), "q_empty");
	/* No feature: libvirt keeps -device and -object key=value, which plugvm-qemu reads. */
	assert_null(strstr(json_object_to_json_string(schema), "features"));
	assert_null(named(schema, "object-add"));
	json_object_put(cr);
	json_object_put(sr);
}

/*
 * -machine none: libvirt 9.0's probe, in its order (spec §9.2), gets an answer to each
 * command, an error only where libvirt takes one. query-migrate-capabilities is another
 * file's; once registered it must run without the machine too (libvirt needs an array).
 */
static void test_probe_runs_without_machine(void **state)
{
	static const struct {
		const char *req, *want;
	} seq[] = {
		{ "\"query-version\"",
		  "{\"return\":{\"qemu\":{\"micro\":0,\"minor\":2,\"major\":7}" },
		{ "\"query-target\"", "{\"return\":{\"arch\":\"x86_64\"}" },
		{ "\"query-qmp-schema\"", "{\"return\":[{" },
		{ "\"query-commands\"", "{\"return\":[{\"name\":\"qmp_capabilities\"}" },
		{ "\"query-kvm\"", "{\"return\":{\"enabled\":" },
		{ "\"qom-list-types\"", "{\"name\":\"isa-serial\"" },
		{ "\"device-list-properties\", \"arguments\": {\"typename\": \"PIIX4_PM\"}",
		  "\"class\":\"DeviceNotFound\"" },
		{ "\"qom-list-properties\", \"arguments\": {\"typename\": \"memory-backend-file\"}",
		  "{\"return\":[]}" },
		{ "\"query-machines\"", "{\"return\":[{\"name\":\"pc-i440fx-7.2\"" },
		{ "\"qom-list-properties\", \"arguments\": {\"typename\": \"none-machine\"}",
		  "{\"return\":[]}" },
		{ "\"query-tpm-models\"", "\"class\":\"CommandNotFound\"" },
		{ "\"query-command-line-options\"", "{\"return\":[]}" },
		{ "\"query-status\"", "{\"return\":{\"status\":\"running\"" },
	};
	char req[256];
	const char *out;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		snprintf(req, sizeof(req), "{\"execute\": %s}\n", seq[i].req);
		assert_contains(execute(req), seq[i].want);
	}
	out = execute("{\"execute\": \"query-migrate-capabilities\"}\n");
	if (!strstr(out, "\"class\":\"CommandNotFound\""))
		assert_contains(out, "{\"return\":[");
}

/* One request for `cmd` with `args` (JSON text); the reply must be one line, for `cmd`. */
static void run_once(const char *cmd, const char *args, bool machineless)
{
	char req[1024];
	struct json_object *r, *e;

	snprintf(req, sizeof(req), "{\"execute\": \"%s\", \"arguments\": %s, \"id\": 7}\n", cmd,
		 args);
	r = reply(req);
	assert_string_equal(str_of(r, "id"), "7");
	if (!machineless) {
		assert_true(json_object_object_get_ex(r, "error", &e));
		assert_string_equal(str_of(e, "class"), "GenericError");
		assert_string_equal(str_of(e, "desc"),
				    "no machine: plugvm-qemu was started with -machine none");
	}
	json_object_put(r);
}

/* Values of each JSON type an argument may be given, hostile ones among them. */
static const char *garbage(enum json_type t, unsigned k)
{
	static const char *const strs[] = { "\"\"", "\"../../../../etc/passwd\"", "\"%s%n\"",
					    "\"memory-backend-file\"" };
	static const char *const ints[] = { "-1", "9223372036854775807", "0", "4294967296" };
	static const char *const other[] = { "null", "[[[]]]", "{\"a\": {}}", "1.5e308" };

	switch (t) {
	case json_type_string:
		return strs[k % 4];
	case json_type_int:
		return ints[k % 4];
	case json_type_boolean:
		return k % 2 ? "true" : "false";
	case json_type_array:
		return k % 2 ? "[]" : "[1, \"x\", null]";
	default:
		return other[k % 4];
	}
}

/*
 * -machine none: every registered command, with no arguments, unknown ones, wrongly typed
 * ones and each declared argument given hostile values, gets one reply; those that need
 * the machine are refused unrun (the ASan build, make check-san, catches a NULL touched).
 */
static void test_every_command_without_machine(void **state)
{
	const struct qmp_command *c;
	unsigned k, nr_machineless = 0;

	(void)state;
	for (c = qmp_server_commands(vm.qmp); c->name; c++) {
		bool machineless = c->flags & QMP_CMD_NO_MACHINE;

		nr_machineless += machineless;
		run_once(c->name, "{}", machineless);
		run_once(c->name, "{\"bogus\": 1}", machineless);
		for (k = 0; k < 4; k++) {
			char args[768] = "{";
			const struct qmp_arg *a;

			for (a = c->args; a && a->name; a++) {
				/* k == 3: every argument of the wrong type */
				enum json_type t = k == 3 && a->type == json_type_string
						       ? json_type_int
						   : k == 3 ? json_type_string
							    : a->type;

				snprintf(args + strlen(args), sizeof(args) - strlen(args),
					 "%s\"%s\": %s", a == c->args ? "" : ", ", a->name,
					 garbage(t, k));
			}
			strcat(args, "}");
			run_once(c->name, args, machineless);
		}
	}
	/*
	 * The probe's commands, query-status, query-version, query-commands and quit; and
	 * control_libvirt.c's that need no guest (migration capabilities, the empty block and
	 * job lists, set-action).
	 */
	assert_int_equal(nr_machineless, 18);
	assert_contains(execute("{\"execute\": \"query-status\"}\n"), "\"status\":\"running\"");
}

UNIT_MAIN(
    NULL, NULL, UNIT_TEST_FIXTURE(test_lifecycle_events_as_qmp),
    UNIT_TEST_FIXTURE(test_ost_names_the_device), UNIT_TEST_FIXTURE(test_migrate_capabilities),
    UNIT_TEST_FIXTURE(test_chardevs), UNIT_TEST_FIXTURE(test_qom_list_and_empty_lists),
    UNIT_TEST_FIXTURE(test_qom_get), UNIT_TEST_FIXTURE(test_set_action),
    UNIT_TEST_FIXTURE(test_ost_burst_is_rate_limited), UNIT_TEST_FIXTURE(test_add_and_del_answers),
    UNIT_TEST_FIXTURE(test_inject_nmi), UNIT_TEST_FIXTURE(test_stats_from_kvm),
    UNIT_TEST_FIXTURE(test_version_is_the_qemu_interface),
    UNIT_TEST_FIXTURE(test_target_kvm_and_machines),
    UNIT_TEST_FIXTURE(test_qom_types_and_properties),
    UNIT_TEST_FIXTURE(test_schema_is_the_command_table),
    cmocka_unit_test_setup_teardown(test_every_command_without_machine, setup_no_machine, teardown),
    cmocka_unit_test_setup_teardown(test_probe_runs_without_machine, setup_no_machine, teardown))
