// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/control.c with a real QMP server and socket client: which thread
 * reports a removal the guest refused (issue 17 A.6: a vCPU thread read vm->cpu_ids while
 * the main loop could free it).
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "vmm/agent.h"
#include "vmm/control.h"
#include "vmm/control_agent.h"
#include "vmm/devices/devices.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"

#define MAX_CPUS 4

/* ---- stubs: the vCPUs, the devices, the agent, the VM's stop ------------------------- */

const struct qmp_command control_agent_commands[] = { { NULL, NULL, NULL } };

void control_agent_event(struct vm *vm, const struct plugvm_agent_msg *m)
{
	(void)vm;
	(void)m;
}

void control_agent_free(struct vm *vm)
{
	(void)vm;
}

void agent_set_event_fn(struct vm *vm, void (*fn)(struct vm *vm, const struct plugvm_agent_msg *m))
{
	(void)vm;
	(void)fn;
}

void acpi_pm_power_button(struct vm *vm)
{
	(void)vm;
}

int cpu_hotplug_plug(struct vm *vm, unsigned slot)
{
	(void)vm;
	(void)slot;
	return 0;
}

int cpu_hotplug_unplug_request(struct vm *vm, unsigned slot)
{
	(void)vm;
	(void)slot;
	return 0;
}

bool cpu_hotplug_present(struct vm *vm, unsigned slot)
{
	(void)vm;
	(void)slot;
	return false;
}

int vcpu_create(struct vm *vm, int id, bool boot)
{
	(void)vm;
	(void)id;
	(void)boot;
	return -ENOSYS;
}

int vcpu_reset_for_sipi(struct vcpu *v)
{
	(void)v;
	return -ENOSYS;
}

int vcpu_start(struct vcpu *v)
{
	(void)v;
	return -ENOSYS;
}

void vm_request_stop(struct vm *vm, int status)
{
	(void)vm;
	(void)status;
}

int vm_start_vcpus(struct vm *vm)
{
	(void)vm;
	return 0;
}

bool vm_stopping(struct vm *vm)
{
	(void)vm;
	return false;
}

/* ---- fixture -------------------------------------------------------------------------- */

static struct vm_config cfg = { .nr_cpus = 2, .max_cpus = MAX_CPUS };
static struct vcpu vcpus[MAX_CPUS];
static struct vm vm;
static char path[108];
static int client = -1;

static int setup(void **state)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct pollfd p;
	char buf[512];

	(void)state;
	memset(&vm, 0, sizeof(vm));
	snprintf(path, sizeof(path), "/tmp/plugvm-test-control-%d.qmp", (int)getpid());
	cfg.qmp_path = path;
	vm.cfg = &cfg;
	vm.vcpus = vcpus;
	assert_int_equal(control_start(&vm), 0);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(client, (struct sockaddr *)&addr, sizeof(addr)), 0);
	p = (struct pollfd){ .fd = client, .events = POLLIN };
	while (!poll(&p, 1, 0))
		qmp_server_dispatch(vm.qmp);
	assert_true(read(client, buf, sizeof(buf)) > 0); /* greeting */
	assert_int_equal(send(client, "{\"execute\": \"qmp_capabilities\"}\n", 32, 0), 32);
	while (!poll(&p, 1, 0))
		qmp_server_dispatch(vm.qmp);
	assert_true(read(client, buf, sizeof(buf)) > 0); /* {"return": {}} */
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

/* What the client can read now, NUL-terminated (static). */
static const char *client_reads(void)
{
	static char buf[1 << 16];
	size_t len = 0;
	unsigned i;

	for (i = 0; i < 20; i++) {
		ssize_t r;

		qmp_server_dispatch(vm.qmp);
		r = recv(client, buf + len, sizeof(buf) - len - 1, MSG_DONTWAIT);
		if (r > 0)
			len += (size_t)r;
	}
	buf[len] = 0;
	return buf;
}

static void *vcpu_thread_ost_refused(void *arg)
{
	(void)arg;
	control_unplug_failed(&vm, 1);
	return NULL;
}

/*
 * Issue 17 A.6: the guest's failing _OST for a removal is handled on a vCPU thread, which
 * built DEVICE_UNPLUG_GUEST_ERROR from vm->cpu_ids[slot] while the main loop could free
 * that id (an eject, a device_add). The vCPU thread only marks the request; the main loop
 * reports it, with the id as it is then.
 */
static void test_refused_removal_is_reported_by_the_main_loop(void **state)
{
	pthread_t t;

	(void)state;
	vm.cpu_ids[1] = strdup("cpu1");
	atomic_store(&vm.unplug_deadline[1], UINT64_MAX / 2); /* a device_del in flight */
	assert_true(control_next_timeout_ms(&vm) > 0);
	assert_int_equal(pthread_create(&t, NULL, vcpu_thread_ost_refused, NULL), 0);
	pthread_join(t, NULL);
	/* Nothing reported from the vCPU thread; the main loop is due at once. */
	assert_not_contains(client_reads(), "DEVICE_UNPLUG_GUEST_ERROR");
	assert_int_equal(control_next_timeout_ms(&vm), 0);
	control_check_timeouts(&vm);
	{
		const char *out = client_reads();

		assert_contains(out, "\"event\":\"DEVICE_UNPLUG_GUEST_ERROR\"");
		assert_contains(out, "\"device\":\"cpu1\"");
	}
	/* Reported once; a later _OST without a request in flight does nothing. */
	assert_int_equal(control_next_timeout_ms(&vm), -1);
	assert_false(control_unplug_failed(&vm, 1));
	control_check_timeouts(&vm);
	assert_not_contains(client_reads(), "DEVICE_UNPLUG_GUEST_ERROR");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_refused_removal_is_reported_by_the_main_loop,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
