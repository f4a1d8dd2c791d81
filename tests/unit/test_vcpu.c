// SPDX-License-Identifier: MIT
/*
 * Unit tests for the life of a vCPU thread (vmm/vcpu.c) against a paravirt direct start
 * from a hostile guest (issue 17 A.6): the guest asks, through port 0xaf24, to start a vCPU
 * that it is ejecting at the same moment. KVM is played by the test (ioctl() is wrapped:
 * a vCPU fd is /dev/zero, KVM_RUN waits for a kick), and so are the moments threads meet
 * (pthread_kill() and pthread_join() are wrapped), so each interleaving is replayed
 * exactly, not hoped for. The guest's writes go through the real I/O bus and devices.
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "vmm/devices/acpi_cpu_hotplug.h"
#include "vmm/devices/devices.h"
#include "vmm/qmp.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"
#include "plugvm_abi.h"

#define MAX_CPUS 4
#define CTX_GPA	 0x10000 /* the guest's start context */
#define CODE_GPA 0x20000 /* entry, stack and page tables: RAM is all the checks look at */

static struct vm_config cfg = { .nr_cpus = 2, .max_cpus = MAX_CPUS };
static struct vm vm;

/* ---- stubs: the PM device, the control socket, chaos, the VM's stop -------------------- */

void acpi_pm_raise_gpe(struct vm *v, unsigned bit)
{
	(void)v;
	(void)bit;
}

bool control_unplug_failed(struct vm *v, unsigned slot)
{
	(void)v;
	(void)slot;
	return false;
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

void qmp_server_event(struct qmp_server *s, const char *name, struct json_object *data)
{
	(void)s;
	(void)name;
	(void)data;
}

void qmp_server_event_key(struct qmp_server *s, uint32_t mask, const char *name, uint32_t key,
			  struct json_object *data)
{
	(void)s;
	(void)mask;
	(void)name;
	(void)key;
	(void)data;
}

void chaos_vcpu_stall(struct chaos *c, unsigned id, const atomic_bool *stop)
{
	(void)c;
	(void)id;
	(void)stop;
}

void chaos_vcpu_start(struct chaos *c, unsigned id, const atomic_bool *stop)
{
	(void)c;
	(void)id;
	(void)stop;
}

void vm_request_stop(struct vm *v, int status)
{
	(void)v;
	fail_msg("the VM was asked to stop (status %d)", status);
}

bool vm_stopping(struct vm *v)
{
	(void)v;
	return false;
}

/* ---- KVM, played by the test ------------------------------------------------------------ */

int __real_ioctl(int fd, unsigned long req, ...);
int __wrap_ioctl(int fd, unsigned long req, ...);
int __real_pthread_kill(pthread_t t, int sig);
int __wrap_pthread_kill(pthread_t t, int sig);
int __real_pthread_join(pthread_t t, void **ret);
int __wrap_pthread_join(pthread_t t, void **ret);
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);

static struct {
	atomic_uint runs[MAX_CPUS]; /* KVM_RUN entries per vCPU */
	atomic_uint runnable[MAX_CPUS]; /* KVM_SET_MP_STATE RUNNABLE: a direct start applied */
} kvm;

static int vcpu_of_fd(int fd)
{
	unsigned i;

	for (i = 0; i < MAX_CPUS; i++)
		if (vm.vcpus[i].fd == fd)
			return (int)i;
	return -1;
}

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	int id;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	switch (req) {
	case KVM_CREATE_VCPU:
		return open("/dev/zero", O_RDWR | O_CLOEXEC); /* mmap()s like a kvm_run */
	case KVM_GET_TSC_KHZ:
		return 1000000;
	case KVM_RUN:
		id = vcpu_of_fd(fd);
		assert_true(id >= 0);
		atomic_fetch_add(&kvm.runs[id], 1);
		/* Wait for a kick, as a vCPU waiting for INIT/SIPI does. */
		while (!vm.vcpus[id].run->immediate_exit)
			nanosleep(&(struct timespec){ 0, 100000 }, NULL);
		errno = EINTR;
		return -1;
	case KVM_SET_MP_STATE:
		id = vcpu_of_fd(fd);
		if (id >= 0 && ((struct kvm_mp_state *)arg)->mp_state == KVM_MP_STATE_RUNNABLE)
			atomic_fetch_add(&kvm.runnable[id], 1);
		return 0;
	case KVM_SET_CPUID2:
	case KVM_GET_REGS:
	case KVM_SET_REGS:
	case KVM_GET_SREGS:
	case KVM_SET_SREGS:
	case KVM_GET_LAPIC:
	case KVM_SET_LAPIC:
	case KVM_GET_FPU:
	case KVM_SET_FPU:
		return 0;
	default:
		return __real_ioctl(fd, req, arg);
	}
}

/* ---- where threads meet ------------------------------------------------------------------ */

/*
 * A hook run inside pthread_kill() before the signal goes out, by the thread that sends
 * it: the test's way to let another thread act at exactly that moment.
 */
static void (*kill_hook)(pthread_t target);
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t joined[16]; /* threads joined and not reused by a pthread_create() since */
static unsigned nr_joined;
static atomic_uint kills_after_join; /* the defect: a signal to a thread already joined */

static bool was_joined(pthread_t t)
{
	bool found = false;
	unsigned i;

	pthread_mutex_lock(&threads_lock);
	for (i = 0; i < nr_joined; i++)
		found |= pthread_equal(joined[i], t);
	pthread_mutex_unlock(&threads_lock);
	return found;
}

int __wrap_pthread_kill(pthread_t t, int sig)
{
	void (*hook)(pthread_t) = kill_hook;

	if (hook) {
		kill_hook = NULL;
		hook(t);
	}
	if (was_joined(t)) {
		/* Undefined behaviour for real (the id may name a new thread): count, do not send. */
		atomic_fetch_add(&kills_after_join, 1);
		return ESRCH;
	}
	return __real_pthread_kill(t, sig);
}

int __wrap_pthread_join(pthread_t t, void **ret)
{
	int err = __real_pthread_join(t, ret);

	pthread_mutex_lock(&threads_lock);
	if (!err && nr_joined < 16)
		joined[nr_joined++] = t;
	pthread_mutex_unlock(&threads_lock);
	return err;
}

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	int err = __real_pthread_create(t, a, fn, arg);
	unsigned i;

	pthread_mutex_lock(&threads_lock);
	for (i = 0; !err && i < nr_joined; i++) {
		if (pthread_equal(joined[i], *t))
			joined[i--] = joined[--nr_joined]; /* the id names a live thread again */
	}
	pthread_mutex_unlock(&threads_lock);
	return err;
}

/* ---- the guest's side ---------------------------------------------------------------- */

static void out32(uint16_t port, uint32_t v, unsigned size)
{
	uint8_t data[4];

	memcpy(data, &v, sizeof(data));
	bus_dispatch(&vm.pio, 0, port, data, size, 1, true);
}

/* The guest's ACPI driver ejects `slot` (modern block: select it, write EJECT). */
static void guest_eject(unsigned slot)
{
	out32(PLUGVM_PORT_CPUHP, 0, 1); /* legacy -> modern (once; later a selector write) */
	out32(PLUGVM_PORT_CPUHP, slot, 4);
	out32(PLUGVM_PORT_CPUHP + 4, ACPI_CPU_HOTPLUG_CTL_EJECT, 1);
}

static struct plugvm_start_ctx *start_ctx(void)
{
	return mem_gpa_ptr(&vm.mem, CTX_GPA, sizeof(struct plugvm_start_ctx));
}

/* The guest's direct start of `apic_id` (port 0xaf24); returns the status plugvm wrote. */
static uint32_t guest_direct_start(unsigned apic_id)
{
	struct plugvm_start_ctx *ctx = start_ctx();

	memset(ctx, 0, sizeof(*ctx));
	ctx->apic_id = apic_id;
	ctx->entry = CODE_GPA;
	ctx->stack = CODE_GPA + 0x1000;
	ctx->cr3 = CODE_GPA + 0x1000;
	ctx->status = 0xffffffffu;
	out32(PLUGVM_PORT_DIRECT_START, CTX_GPA, 4);
	return ctx->status;
}

/* The guest's other vCPU, running a direct start while the test holds a thread somewhere. */
static atomic_uint guest_done;
static atomic_uint guest_status;

static void *guest_vcpu0(void *arg)
{
	atomic_store(&guest_status, guest_direct_start((unsigned)(uintptr_t)arg));
	atomic_store(&guest_done, 1);
	return NULL;
}

/* True once *v >= n, waiting at most `ms`. */
static bool wait_until(atomic_uint *v, unsigned n, unsigned ms)
{
	unsigned i;

	for (i = 0; i < ms * 10 && atomic_load(v) < n; i++)
		nanosleep(&(struct timespec){ 0, 100000 }, NULL);
	return atomic_load(v) >= n;
}

/* True if `s` was posted within `ms`. */
static bool sem_wait_ms(sem_t *s, unsigned ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	while (sem_timedwait(s, &ts) < 0)
		if (errno != EINTR)
			return false;
	return true;
}

static void wait_runs(unsigned id, unsigned n)
{
	assert_true(wait_until(&kvm.runs[id], n, 1000));
}

/* ---- the VMM's side ------------------------------------------------------------------- */

/*
 * device_add of a parked vCPU: back to its power-on state, a new thread, present. It
 * must wait for INIT/SIPI: no direct start is applied on its way into KVM_RUN.
 */
static void host_readd(unsigned slot)
{
	unsigned runs = atomic_load(&kvm.runs[slot]), started = atomic_load(&kvm.runnable[slot]);

	assert_int_equal(vcpu_reset_for_sipi(&vm.vcpus[slot]), 0);
	assert_int_equal(vcpu_start(&vm.vcpus[slot]), 0);
	assert_int_equal(cpu_hotplug_plug(&vm, slot), 0);
	/* Its thread is in KVM_RUN: whatever it applies first, it applied by now. */
	wait_runs(slot, runs + 1);
	assert_int_equal(atomic_load(&kvm.runnable[slot]), started);
}

static int setup(void **state)
{
	static struct kvm_cpuid2 no_cpuid;
	unsigned i;

	(void)state;
	memset(&vm, 0, sizeof(vm));
	memset(&kvm, 0, sizeof(kvm));
	nr_joined = 0;
	atomic_store(&kills_after_join, 0);
	atomic_store(&guest_done, 0);
	vm.cfg = &cfg;
	vm.pio.name = "pio";
	vm.kvm.vm_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	vm.kvm.run_size = 4096;
	vm.kvm.supported_cpuid = &no_cpuid;
	vm.boot_vcpus_started = true; /* threads started from here on are hot-added ones */
	assert_true(vm.kvm.vm_fd >= 0);
	assert_int_equal(mem_init(&vm.mem, 4u << 20), 0);
	vm.vcpus = calloc(MAX_CPUS, sizeof(*vm.vcpus));
	assert_non_null(vm.vcpus);
	for (i = 0; i < MAX_CPUS; i++) {
		vm.vcpus[i].vm = &vm;
		vm.vcpus[i].id = (int)i;
		vm.vcpus[i].fd = -1;
	}
	assert_int_equal(cpu_hotplug_init(&vm), 0);
	assert_int_equal(vcpu_init_signals(), 0);
	/* Two present vCPUs, both waiting in KVM_RUN. */
	for (i = 0; i < 2; i++) {
		assert_int_equal(vcpu_create(&vm, (int)i, false), 0);
		assert_int_equal(vcpu_start(&vm.vcpus[i]), 0);
		wait_runs(i, 1);
	}
	return 0;
}

static int teardown(void **state)
{
	unsigned i;

	(void)state;
	kill_hook = NULL;
	for (i = 0; i < MAX_CPUS; i++) {
		vcpu_stop_and_join(&vm.vcpus[i]);
		if (vm.vcpus[i].fd >= 0)
			vcpu_destroy(&vm.vcpus[i]);
	}
	cpu_hotplug_exit(&vm);
	free(vm.vcpus);
	mem_destroy(&vm.mem);
	close(vm.kvm.vm_fd);
	return 0;
}

/* A direct start of a vCPU works: its thread puts it in long mode (RUNNABLE). */
static void test_direct_start(void **state)
{
	(void)state;
	assert_int_equal(guest_direct_start(1), PLUGVM_START_OK);
	assert_true(wait_until(&kvm.runnable[1], 1, 1000));
	/* Not for a vCPU that has no thread. */
	assert_int_equal(guest_direct_start(2), PLUGVM_START_EAPIC);
}

/* The main loop kicks vCPU 1 to end it: that is when the guest's vCPU 0 asks to start it. */
static void direct_start_now(pthread_t target)
{
	pthread_t t;

	(void)target;
	assert_int_equal(pthread_create(&t, NULL, guest_vcpu0, (void *)(uintptr_t)1), 0);
	/* It may have to wait for the eject to go on: give it a moment, not for ever. */
	wait_until(&guest_done, 1, 200);
	pthread_detach(t);
}

/*
 * The guest asks to start vCPU 1 while the main loop ends its thread for an eject: the
 * request must not outlive the thread. Before the fix it stayed pending through the park
 * and the next hot-add's thread applied it: a re-added vCPU jumped to a stale entry
 * instead of waiting for INIT/SIPI.
 */
static void test_start_request_does_not_survive_park(void **state)
{
	(void)state;
	guest_eject(1);
	kill_hook = direct_start_now;
	cpu_hotplug_process_ejects(&vm);
	assert_true(wait_until(&guest_done, 1, 5000));
	assert_int_equal(atomic_load(&kvm.runnable[1]), 0);

	host_readd(1);
	/* The re-added vCPU takes a new direct start as usual. */
	assert_int_equal(guest_direct_start(1), PLUGVM_START_OK);
	assert_true(wait_until(&kvm.runnable[1], 1, 1000));
}

/* The guest's direct start is about to kick vCPU 1: that is when the main loop ejects it. */
static sem_t eject_now, eject_done;

static void eject_meanwhile(pthread_t target)
{
	(void)target;
	sem_post(&eject_now);
	/* The eject must wait for the kick to be sent; give it a moment, not for ever. */
	sem_wait_ms(&eject_done, 300);
}

/*
 * The guest asks to start vCPU 1, and the main loop carries out its eject at the same
 * moment: the kick must reach the live thread, never a thread already joined (before the
 * fix the state was checked, then the thread joined, then signalled).
 */
static void test_direct_start_never_signals_a_joined_thread(void **state)
{
	pthread_t t;

	(void)state;
	assert_int_equal(sem_init(&eject_now, 0, 0), 0);
	assert_int_equal(sem_init(&eject_done, 0, 0), 0);
	guest_eject(1);
	kill_hook = eject_meanwhile;
	assert_int_equal(pthread_create(&t, NULL, guest_vcpu0, (void *)(uintptr_t)1), 0);
	assert_true(sem_wait_ms(&eject_now, 5000));
	cpu_hotplug_process_ejects(&vm);
	sem_post(&eject_done);
	assert_true(wait_until(&guest_done, 1, 5000));
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(atomic_load(&kills_after_join), 0);

	/* Whatever the guest was told, the re-added vCPU waits for INIT/SIPI. */
	host_readd(1);
	sem_destroy(&eject_now);
	sem_destroy(&eject_done);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_direct_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_request_does_not_survive_park, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_direct_start_never_signals_a_joined_thread,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
