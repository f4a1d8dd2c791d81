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
#include "vmm/control/control.h"
#include "vmm/cpus.h"
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
				.topo = {
				    .sockets = 1, .dies = 1, .cores = MAX_CPUS, .threads = 1 } };
static struct vm vm;
static char path[108];
static int client = -1;

static int setup(void **state)
{
	(void)state;
	memset(&vm, 0, sizeof(vm));
	memset(ids, 0, sizeof(ids));
	add_result = removal_result = 0;
	nmi_calls = 0;
	snprintf(path, sizeof(path), "/tmp/plugvm-test-control-%d.qmp", (int)getpid());
	cfg.qmp_path = path;
	vm.cfg = &cfg;
	assert_int_equal(control_start(&vm), 0);
	assert_non_null(event_fn);
	client = qmp_test_client(vm.qmp, path);
	qmp_test_negotiate(vm.qmp, client);
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

UNIT_MAIN(NULL, NULL, UNIT_TEST_FIXTURE(test_lifecycle_events_as_qmp),
	  UNIT_TEST_FIXTURE(test_ost_names_the_device),
	  UNIT_TEST_FIXTURE(test_migrate_capabilities), UNIT_TEST_FIXTURE(test_chardevs),
	  UNIT_TEST_FIXTURE(test_qom_list_and_empty_lists), UNIT_TEST_FIXTURE(test_set_action),
	  UNIT_TEST_FIXTURE(test_ost_burst_is_rate_limited),
	  UNIT_TEST_FIXTURE(test_add_and_del_answers), UNIT_TEST_FIXTURE(test_inject_nmi),
	  UNIT_TEST_FIXTURE(test_stats_from_kvm))
