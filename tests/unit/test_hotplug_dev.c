// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/devices/cpu_hotplug.c on a real I/O bus with a real QMP server and a
 * socket client: the guest's writes to QEMU's CPU hotplug block replayed from the host side
 * as a hostile guest would make them (issue 17 A.5: one `rep outsl` to the _OST port).
 */
#include "tests/unit/unit.h"

#include <json-c/json.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include "vmm/control.h"
#include "vmm/devices/acpi_cpu_hotplug.h"
#include "vmm/devices/devices.h"
#include "vmm/qmp.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"
#include "plugvm_abi.h"

#define MAX_CPUS 4

static struct vm_config cfg = { .nr_cpus = 2, .max_cpus = MAX_CPUS };
static struct vm vm;
static const struct qmp_command no_commands[] = { { NULL, NULL, NULL } };

/* ---- stubs: the PM device, the control socket's CPU bookkeeping, the vCPUs ---------- */

void acpi_pm_raise_gpe(struct vm *v, unsigned bit)
{
	(void)v;
	(void)bit;
}

static unsigned unplug_failed;

bool control_unplug_failed(struct vm *v, unsigned slot)
{
	(void)v;
	(void)slot;
	unplug_failed++;
	return true;
}

void control_cpu_report(struct vm *v, unsigned slot, bool online, int32_t result, uint64_t guest_ns)
{
	(void)v;
	(void)slot;
	(void)online;
	(void)result;
	(void)guest_ns;
}

void control_cpu_path(const struct vm *v, unsigned slot, char *buf, size_t len)
{
	(void)v;
	snprintf(buf, len, "/machine/unattached/device[%u]", slot);
}

void control_cpu_gone(struct vm *v, unsigned slot)
{
	(void)v;
	(void)slot;
}

int vcpu_direct_start(struct vcpu *v, const struct long_mode_start *r)
{
	(void)v;
	(void)r;
	return -1;
}

void vcpu_stop_and_join(struct vcpu *v)
{
	(void)v;
}

/* ---- fixture -------------------------------------------------------------------------- */

static char path[108];
static int client = -1;

static int setup(void **state)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct pollfd p;
	char buf[512];

	(void)state;
	memset(&vm, 0, sizeof(vm));
	vm.cfg = &cfg;
	vm.pio.name = "pio";
	assert_int_equal(mem_init(&vm.mem, 1 << 20), 0);
	assert_int_equal(cpu_hotplug_init(&vm), 0);
	vm.qmp = qmp_server_create(no_commands, &vm, "plugvm test", 0, 2, 0);
	assert_non_null(vm.qmp);
	snprintf(path, sizeof(path), "/tmp/plugvm-test-hotplug-%d.qmp", (int)getpid());
	assert_int_equal(qmp_server_listen(vm.qmp, path), 0);
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
	qmp_server_destroy(vm.qmp);
	cpu_hotplug_exit(&vm);
	mem_destroy(&vm.mem);
	unlink(path);
	return 0;
}

/* The guest: `count` accesses of `size` bytes at `offset` in the block (string I/O). */
static void out(unsigned offset, unsigned size, unsigned count, const void *data)
{
	uint8_t buf[4096 * 4];

	memcpy(buf, data, (size_t)size * count);
	assert_true(bus_dispatch(&vm.pio, 0, PLUGVM_PORT_CPUHP + offset, buf, size, count, true));
}

static void outl(unsigned offset, uint32_t v)
{
	out(offset, 4, 1, &v);
}

static void outb(unsigned offset, uint8_t v)
{
	out(offset, 1, 1, &v);
}

/* Events the client can read now. */
static unsigned count_events(const char *name)
{
	static char buf[1 << 20];
	unsigned i, n = 0;
	size_t len = 0;
	char *p;

	for (i = 0; i < 20; i++) {
		ssize_t r;

		qmp_server_dispatch(vm.qmp);
		r = recv(client, buf + len, sizeof(buf) - len - 1, MSG_DONTWAIT);
		if (r > 0)
			len += (size_t)r;
	}
	buf[len] = 0;
	for (p = buf; (p = strstr(p, name)); p++)
		n++;
	return n;
}

/*
 * Issue 17 A.5: one `rep outsl` of 1024 words to the _OST port (command OST_STATUS) was
 * 1024 ACPI_DEVICE_OST events to every client. They are rate-limited: at most the burst
 * goes out now, and the latest of the rest when the budget refills.
 */
static void test_rep_outsl_to_ost_is_rate_limited(void **state)
{
	static uint32_t words[1024];
	struct timespec t0, t1;
	double s;
	unsigned n;

	(void)state;
	outb(0, 0); /* to the modern block */
	outl(0, 1); /* selector: slot 1 */
	outb(5, ACPI_CPU_HOTPLUG_CMD_OST_EVENT);
	outl(8, 3); /* an eject request's _OST */
	outb(5, ACPI_CPU_HOTPLUG_CMD_OST_STATUS);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	out(8, 4, 1024, words);
	n = count_events("ACPI_DEVICE_OST");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_true(n >= 1);
	assert_true(n <= 256 + 256 * s + 1); /* the burst, and the rate while this ran */
	assert_true(n < 1024);
	assert_int_equal(unplug_failed, 0); /* status 0: nothing refused */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rep_outsl_to_ost_is_rate_limited, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
