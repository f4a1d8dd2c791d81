// SPDX-License-Identifier: MIT
/*
 * Unit tests for the vCPU lifecycle (vmm/cpus.c with vmm/vcpu.c and the CPU hotplug
 * devices on the real I/O bus): adds, removals, ejects, the guest's _OST and reports, and
 * a hostile guest's direct start racing the eject of the vCPU it names.
 * KVM is played by the test (ioctl() and mmap() are wrapped: a vCPU fd is /dev/zero,
 * KVM_RUN waits for a kick), and so are the moments threads meet (pthread_kill(),
 * pthread_join() and pthread_create() are wrapped), so each interleaving is replayed
 * exactly, not hoped for. The guest's writes go through the bus as a vCPU's exits would.
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "vmm/cpus.h"
#include "vmm/devices/acpi_cpu_hotplug.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"
#include "plugvm_abi.h"

#define MAX_CPUS 4
#define CTX_GPA	 0x10000 /* the guest's start context */
#define RPT_GPA	 0x11000 /* the guest's hotplug report */
#define CODE_GPA 0x20000 /* entry, stack and page tables: RAM is all the checks look at */

static struct vm_config cfg = { .nr_cpus = 2, .max_cpus = MAX_CPUS };
static struct vm vm;
static bool stopping; /* what vm_stopping() says */

/* ---- the VM's stop (the PM device and --chaos are the shim's stubs) -------------------- */

void vm_request_stop(struct vm *v, int status)
{
	(void)v;
	fail_msg("the VM was asked to stop (status %d)", status);
}

bool vm_stopping(struct vm *v)
{
	(void)v;
	return stopping;
}

/* ---- KVM, played by the test ------------------------------------------------------------ */

int __real_ioctl(int fd, unsigned long req, ...);
int __wrap_ioctl(int fd, unsigned long req, ...);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int __real_pthread_kill(pthread_t t, int sig);
int __wrap_pthread_kill(pthread_t t, int sig);
int __real_pthread_join(pthread_t t, void **ret);
int __wrap_pthread_join(pthread_t t, void **ret);
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);

static struct {
	int fd[MAX_CPUS]; /* each vCPU's fd (-1: none) and its kvm_run */
	struct kvm_run *run[MAX_CPUS];
	atomic_uint created; /* KVM_CREATE_VCPU calls */
	bool fail_create; /* KVM_CREATE_VCPU fails with ENOSPC (KVM's limit) */
	bool fail_mmap; /* the next kvm_run mapping fails with ENOMEM */
	atomic_uint cpuid_set[MAX_CPUS]; /* KVM_SET_CPUID2 calls per vCPU */
	atomic_uint runs[MAX_CPUS]; /* KVM_RUN entries per vCPU */
	atomic_uint runnable[MAX_CPUS]; /* KVM_SET_MP_STATE RUNNABLE: a direct start applied */
	atomic_uint pv_eoi_off[MAX_CPUS]; /* KVM_SET_MSRS writing 0 to MSR_KVM_PV_EOI_EN */
} kvm;

static int vcpu_of_fd(int fd)
{
	unsigned i;

	for (i = 0; fd >= 0 && i < MAX_CPUS; i++)
		if (kvm.fd[i] == fd)
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
		id = (int)(uintptr_t)arg;
		assert_true(id >= 0 && id < MAX_CPUS);
		assert_true(kvm.fd[id] < 0); /* KVM refuses an id twice */
		if (kvm.fail_create) {
			errno = ENOSPC;
			return -1;
		}
		kvm.fd[id] = open("/dev/zero", O_RDWR | O_CLOEXEC); /* mmap()s like a kvm_run */
		atomic_fetch_add(&kvm.created, 1);
		return kvm.fd[id];
	case KVM_GET_TSC_KHZ:
		return 1000000;
	case KVM_RUN:
		id = vcpu_of_fd(fd);
		assert_true(id >= 0);
		atomic_fetch_add(&kvm.runs[id], 1);
		/* Wait for a kick (SIGUSR1 sets immediate_exit), as a vCPU waiting for SIPI. */
		while (!kvm.run[id]->immediate_exit)
			nanosleep(&(struct timespec){ 0, 100000 }, NULL);
		errno = EINTR;
		return -1;
	case KVM_SET_MP_STATE:
		id = vcpu_of_fd(fd);
		if (id >= 0 && ((struct kvm_mp_state *)arg)->mp_state == KVM_MP_STATE_RUNNABLE)
			atomic_fetch_add(&kvm.runnable[id], 1);
		return 0;
	case KVM_SET_CPUID2:
		id = vcpu_of_fd(fd);
		assert_true(id >= 0);
		atomic_fetch_add(&kvm.cpuid_set[id], 1);
		return 0;
	case KVM_GET_REGS:
	case KVM_SET_REGS:
	case KVM_GET_SREGS:
	case KVM_SET_SREGS:
	case KVM_GET_LAPIC:
	case KVM_SET_LAPIC:
	case KVM_GET_FPU:
	case KVM_SET_FPU:
		return 0;
	case KVM_SET_MSRS: {
		struct kvm_msrs *m = arg;
		unsigned i;

		id = vcpu_of_fd(fd);
		for (i = 0; id >= 0 && i < m->nmsrs; i++)
			if (m->entries[i].index == 0x4b564d04 && m->entries[i].data == 0)
				atomic_fetch_add(&kvm.pv_eoi_off[id], 1);
		return (int)m->nmsrs;
	}
	default:
		return __real_ioctl(fd, req, arg);
	}
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;
	int id = vcpu_of_fd(fd);

	if (id >= 0 && kvm.fail_mmap) {
		kvm.fail_mmap = false;
		errno = ENOMEM;
		return MAP_FAILED;
	}
	p = __real_mmap(addr, len, prot, flags, fd, off);
	if (id >= 0 && p != MAP_FAILED)
		kvm.run[id] = p;
	return p;
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

/* ---- what cpus tells the control socket ---------------------------------------------- */

static struct {
	pthread_mutex_t lock;
	unsigned nr;
	struct cpus_event ev[64];
	char id[64][16];
} events = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void on_event(void *opaque, const struct cpus_event *e)
{
	(void)opaque;
	pthread_mutex_lock(&events.lock);
	if (events.nr < 64) {
		events.ev[events.nr] = *e;
		snprintf(events.id[events.nr], sizeof(events.id[0]), "%s", e->id ? e->id : "");
		events.nr++;
	}
	pthread_mutex_unlock(&events.lock);
}

/* How many events of `type` so far; the last one's index in *last. */
static unsigned nr_events(enum cpus_event_type type, unsigned *last)
{
	unsigned i, n = 0;

	pthread_mutex_lock(&events.lock);
	for (i = 0; i < events.nr; i++) {
		if (events.ev[i].type == type) {
			n++;
			if (last)
				*last = i;
		}
	}
	pthread_mutex_unlock(&events.lock);
	return n;
}

/* ---- the guest's side ---------------------------------------------------------------- */

static void out32(uint16_t port, uint32_t v, unsigned size)
{
	uint8_t data[4];

	memcpy(data, &v, sizeof(data));
	assert_true(bus_dispatch(&vm.pio, 0, port, data, size, 1, true));
}

/* The guest's ACPI driver takes the block to modern mode (QEMU's switch). */
static void guest_modern(void)
{
	out32(PLUGVM_PORT_CPUHP, 0, 1);
}

/* The guest's ACPI driver ejects `slot`. */
static void guest_eject(unsigned slot)
{
	guest_modern(); /* once; a selector write after that */
	out32(PLUGVM_PORT_CPUHP, slot, 4);
	out32(PLUGVM_PORT_CPUHP + 4, ACPI_CPU_HOTPLUG_CTL_EJECT, 1);
}

/* The guest's ACPI driver answers a request for `slot` with _OST (`source`, `status`). */
static void guest_ost(unsigned slot, uint32_t source, uint32_t status)
{
	out32(PLUGVM_PORT_CPUHP, slot, 4);
	out32(PLUGVM_PORT_CPUHP + 5, ACPI_CPU_HOTPLUG_CMD_OST_EVENT, 1);
	out32(PLUGVM_PORT_CPUHP + 8, source, 4);
	out32(PLUGVM_PORT_CPUHP + 5, ACPI_CPU_HOTPLUG_CMD_OST_STATUS, 1);
	out32(PLUGVM_PORT_CPUHP + 8, status, 4);
}

/* The guest's paravirt report: `slot` is online after `guest_ns`. */
static void guest_report_online(unsigned slot, uint64_t guest_ns)
{
	struct plugvm_hotplug_report *r =
	    mem_gpa_ptr(&vm.mem, RPT_GPA, sizeof(struct plugvm_hotplug_report));

	memset(r, 0, sizeof(*r));
	r->apic_id = slot;
	r->op = PLUGVM_HOTPLUG_OP_ONLINE;
	r->guest_ns = guest_ns;
	out32(PLUGVM_PORT_HOTPLUG_REPORT, RPT_GPA, 4);
}

/* The guest's direct start of `apic_id` (port 0xaf24); returns the status plugvm wrote. */
static uint32_t guest_direct_start(unsigned apic_id)
{
	struct plugvm_start_ctx *ctx =
	    mem_gpa_ptr(&vm.mem, CTX_GPA, sizeof(struct plugvm_start_ctx));

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

static void wait_runs(unsigned id, unsigned n)
{
	assert_true(wait_until(&kvm.runs[id], n, 1000));
}

/* ---- the VMM's side ------------------------------------------------------------------- */

/*
 * device_add of `slot` (new or parked): a thread waiting in KVM_RUN, present. It waits for
 * INIT/SIPI: no direct start is applied on its way into KVM_RUN.
 */
static void host_add(unsigned slot, const char *id)
{
	unsigned runs = atomic_load(&kvm.runs[slot]), started = atomic_load(&kvm.runnable[slot]);

	assert_int_equal(cpus_add(vm.cpus, slot, id), 0);
	assert_true(cpus_present(vm.cpus, slot));
	assert_true(cpus_tid(vm.cpus, slot) > 0);
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
	for (i = 0; i < MAX_CPUS; i++)
		kvm.fd[i] = -1;
	events.nr = 0;
	nr_joined = 0;
	stopping = false;
	atomic_store(&kills_after_join, 0);
	atomic_store(&guest_done, 0);
	vm.cfg = &cfg;
	vm.pio.name = "pio";
	vm.kvm.vm_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	vm.kvm.run_size = 4096;
	vm.kvm.supported_cpuid = &no_cpuid;
	assert_true(vm.kvm.vm_fd >= 0);
	assert_int_equal(mem_init(&vm.mem, 4u << 20), 0);
	assert_int_equal(cpus_create(&vm), 0);
	cpus_set_event_fn(vm.cpus, on_event, NULL);
	assert_int_equal(vcpu_init_signals(), 0);
	/* Two boot vCPUs, both waiting in KVM_RUN. */
	assert_int_equal(cpus_create_boot(vm.cpus), 0);
	assert_int_equal(cpus_start_boot(vm.cpus, false), 0);
	for (i = 0; i < 2; i++)
		wait_runs(i, 1);
	return 0;
}

/* The same with --spare-vcpus 1, and 2. */
static int setup_spare(void **state)
{
	cfg.spare_vcpus = 1;
	return setup(state);
}

static int setup_spares(void **state)
{
	cfg.spare_vcpus = 2;
	return setup(state);
}

static int teardown(void **state)
{
	(void)state;
	cfg.spare_vcpus = 0;
	kill_hook = NULL;
	cpus_destroy(vm.cpus);
	vm.cpus = NULL;
	mem_destroy(&vm.mem);
	close(vm.kvm.vm_fd);
	return 0;
}

/*
 * stop holds every vCPU out of KVM_RUN, one added meanwhile included;
 * system_reset (only while not running) parks the hot-added one with DEVICE_DELETED and
 * keeps the boot CPUs and leaves the VM in prelaunch; cont lets them all back in.
 */
static void test_pause_reset_resume(void **state)
{
	unsigned last = 0, runs[2], off;

	(void)state;
	assert_int_equal(cpus_run_state(vm.cpus), CPUS_RUNNING);
	assert_int_equal(cpus_reset(vm.cpus), -EBUSY);
	assert_int_equal(cpus_pause(vm.cpus), 0);
	assert_int_equal(cpus_run_state(vm.cpus), CPUS_PAUSED);
	assert_int_equal(cpus_pause(vm.cpus), 0); /* nothing to do */
	host_add(2, "hot");
	assert_true(cpus_present(vm.cpus, 2));
	off = atomic_load(&kvm.pv_eoi_off[0]);
	assert_int_equal(cpus_reset(vm.cpus), 0);
	/* KVM's paravirt EOI, which a guest points into its memory, is off after the reset. */
	assert_true(atomic_load(&kvm.pv_eoi_off[0]) > off);
	assert_false(cpus_present(vm.cpus, 2));
	assert_true(cpus_present(vm.cpus, 0) && cpus_present(vm.cpus, 1));
	assert_int_equal(nr_events(CPUS_EVENT_DELETED, &last), 1);
	assert_int_equal(events.ev[last].slot, 2);
	assert_string_equal(events.id[last], "hot");
	/* QEMU's run state after a reset of a VM not running: prelaunch, until cont. */
	assert_int_equal(cpus_run_state(vm.cpus), CPUS_PRELAUNCH);
	runs[0] = atomic_load(&kvm.runs[0]);
	runs[1] = atomic_load(&kvm.runs[1]);
	assert_true(cpus_resume(vm.cpus));
	assert_false(cpus_resume(vm.cpus));
	assert_int_equal(cpus_run_state(vm.cpus), CPUS_RUNNING);
	wait_runs(0, runs[0] + 1);
	wait_runs(1, runs[1] + 1);
	host_add(2, NULL); /* the parked fd, again */
}

/* Adds and removals: what each is refused for. */
static void test_add_and_remove_refusals(void **state)
{
	(void)state;
	assert_int_equal(cpus_add(vm.cpus, 1, NULL), -EEXIST);
	assert_int_equal(cpus_add(vm.cpus, MAX_CPUS, NULL), -EINVAL);
	assert_int_equal(cpus_request_removal(vm.cpus, 2), -ENODEV);
	assert_int_equal(cpus_request_removal(vm.cpus, 1), -EOPNOTSUPP); /* legacy mode */
	guest_modern();
	assert_int_equal(cpus_request_removal(vm.cpus, 0), -EPERM);
	assert_int_equal(cpus_request_removal(vm.cpus, 1), 0);
	assert_int_equal(cpus_request_removal(vm.cpus, 1), -EALREADY);
	assert_true(cpus_next_timeout_ms(vm.cpus) > CPUS_UNPLUG_TIMEOUT_MS - 1000);
	stopping = true;
	assert_int_equal(cpus_add(vm.cpus, 2, NULL), -ESHUTDOWN);
	assert_false(cpus_present(vm.cpus, 2));
}

/*
 * A hot-added CPU keeps its id until the guest ejects it: then its thread ends, the fd is
 * parked and reused by the next add of the slot, and DELETED names it.
 */
static void test_eject_parks_and_forgets(void **state)
{
	unsigned created, last = 0;

	(void)state;
	host_add(2, "cpu2");
	assert_string_equal(cpus_id(vm.cpus, 2), "cpu2");
	created = atomic_load(&kvm.created);
	guest_eject(2);
	assert_int_equal(nr_events(CPUS_EVENT_DELETED, NULL), 0); /* the main loop's to do */
	cpus_process(vm.cpus);
	assert_int_equal(nr_events(CPUS_EVENT_DELETED, &last), 1);
	assert_int_equal(events.ev[last].slot, 2);
	assert_string_equal(events.id[last], "cpu2");
	assert_false(cpus_present(vm.cpus, 2));
	assert_null(cpus_id(vm.cpus, 2));
	host_add(2, NULL);
	assert_int_equal(atomic_load(&kvm.created), created); /* the parked fd */
	assert_null(cpus_id(vm.cpus, 2));
}

/* The guest's report carries the time since the add that asked for it, once. */
static void test_report_times_the_request(void **state)
{
	unsigned last = 0;

	(void)state;
	host_add(2, NULL);
	guest_report_online(2, 1234);
	assert_int_equal(nr_events(CPUS_EVENT_REPORT, &last), 1);
	assert_true(events.ev[last].online && events.ev[last].requested);
	assert_int_equal(events.ev[last].guest_ns, 1234);
	guest_report_online(2, 99);
	assert_int_equal(nr_events(CPUS_EVENT_REPORT, &last), 2);
	assert_false(events.ev[last].requested);
}

static void *vcpu_thread_refuses(void *arg)
{
	(void)arg;
	guest_ost(2, 3, 1); /* an eject request's _OST, failed */
	return NULL;
}

/*
 * The guest's failing _OST for a removal comes on a vCPU thread, which must not read the
 * CPU's id (the main loop may free it). The vCPU thread only marks the request; the main
 * loop reports it, once, with the id. A refusal counts for the removal it answered only.
 */
static void test_refused_removal_is_reported_by_the_main_loop(void **state)
{
	unsigned last = 0;
	pthread_t t;

	(void)state;
	host_add(2, "cpu2");
	guest_modern();
	assert_int_equal(cpus_request_removal(vm.cpus, 2), 0);
	assert_true(cpus_next_timeout_ms(vm.cpus) > 0);
	assert_int_equal(pthread_create(&t, NULL, vcpu_thread_refuses, NULL), 0);
	pthread_join(t, NULL);
	assert_int_equal(nr_events(CPUS_EVENT_OST, &last), 1);
	assert_int_equal(events.ev[last].ost_source, 3);
	assert_int_equal(events.ev[last].ost_status, 1);
	/* Nothing reported from the vCPU thread; the main loop is due at once. */
	assert_int_equal(nr_events(CPUS_EVENT_UNPLUG_FAILED, NULL), 0);
	assert_int_equal(cpus_next_timeout_ms(vm.cpus), 0);
	cpus_process(vm.cpus);
	assert_int_equal(nr_events(CPUS_EVENT_UNPLUG_FAILED, &last), 1);
	assert_string_equal(events.id[last], "cpu2");
	/* Reported once; a later _OST without a request in flight does nothing. */
	assert_int_equal(cpus_next_timeout_ms(vm.cpus), -1);
	guest_ost(2, 3, 1);
	cpus_process(vm.cpus);
	assert_int_equal(nr_events(CPUS_EVENT_UNPLUG_FAILED, NULL), 1);
	/* The CPU stays, and may be asked again: a new removal, not refused yet. */
	assert_true(cpus_present(vm.cpus, 2));
	assert_int_equal(cpus_request_removal(vm.cpus, 2), 0);
	assert_true(cpus_next_timeout_ms(vm.cpus) > 0);
	cpus_process(vm.cpus);
	assert_int_equal(nr_events(CPUS_EVENT_UNPLUG_FAILED, NULL), 1);
	/* Its own refusal, answered twice, is reported once. */
	guest_ost(2, 3, 1);
	guest_ost(2, 3, 1);
	assert_int_equal(cpus_next_timeout_ms(vm.cpus), 0);
	cpus_process(vm.cpus);
	cpus_process(vm.cpus);
	assert_int_equal(nr_events(CPUS_EVENT_UNPLUG_FAILED, NULL), 2);
	assert_int_equal(cpus_next_timeout_ms(vm.cpus), -1);
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
	cpus_process(vm.cpus);
	assert_true(wait_until(&guest_done, 1, 5000));
	assert_int_equal(atomic_load(&kvm.runnable[1]), 0);

	host_add(1, NULL);
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
	cpus_process(vm.cpus);
	sem_post(&eject_done);
	assert_true(wait_until(&guest_done, 1, 5000));
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(atomic_load(&kills_after_join), 0);

	/* Whatever the guest was told, the re-added vCPU waits for INIT/SIPI. */
	host_add(1, NULL);
	sem_destroy(&eject_now);
	sem_destroy(&eject_done);
}

/*
 * The spare vCPUs' wait for a quiet moment, made exact: `quiet()` ends it (no wait), and
 * `busy()` makes it longer than any test (a minute), so that "not yet" does not depend on
 * how long the test's own steps took on a loaded host.
 */
static void quiet(void)
{
	cpus_set_spare_quiet_ms(vm.cpus, 0);
}

static void busy(void)
{
	cpus_set_spare_quiet_ms(vm.cpus, 60000);
}

/*
 * --spare-vcpus 1: once hotplug has been quiet for CPUS_SPARE_QUIET_MS after the boot CPUs
 * started, the main loop creates the lowest slot's vCPU (CPUID set, no thread, not
 * present); an add there uses it, creates nothing and leaves the CPUID to it; the next
 * comes once hotplug is quiet again, never right after an add; none once every slot has one.
 */
static void test_spare_vcpus(void **state)
{
	(void)state;
	busy();
	cpus_process(vm.cpus); /* the boot's bring-up is not quiet yet */
	assert_int_equal(atomic_load(&kvm.created), 2);
	assert_true(cpus_next_timeout_ms(vm.cpus) > 50000); /* the main loop comes back for it */
	quiet();
	assert_int_equal(cpus_next_timeout_ms(vm.cpus), 0);
	cpus_process(vm.cpus);
	assert_int_equal(atomic_load(&kvm.created), 3);
	assert_true(kvm.fd[2] >= 0);
	assert_false(cpus_present(vm.cpus, 2));
	assert_int_equal(atomic_load(&kvm.cpuid_set[2]), 1);
	assert_int_equal(atomic_load(&kvm.runs[2]), 0);
	assert_int_equal(cpus_next_timeout_ms(vm.cpus), -1); /* one is wanted, one is there */
	cpus_process(vm.cpus);
	assert_int_equal(atomic_load(&kvm.created), 3);

	busy();
	host_add(2, "cpu2");
	assert_int_equal(atomic_load(&kvm.created), 3);
	assert_int_equal(atomic_load(&kvm.cpuid_set[2]), 1);
	cpus_process(vm.cpus); /* right after an add: not yet */
	assert_true(cpus_next_timeout_ms(vm.cpus) > 50000);
	assert_int_equal(atomic_load(&kvm.created), 3);
	quiet();
	cpus_process(vm.cpus);
	assert_int_equal(atomic_load(&kvm.created), 4);
	assert_true(kvm.fd[3] >= 0 && !cpus_present(vm.cpus, 3));

	/* Parked slots and spares alike: an eject parks 2; both adds create nothing. */
	guest_eject(2);
	cpus_process(vm.cpus);
	assert_false(cpus_present(vm.cpus, 2));
	host_add(3, NULL);
	host_add(2, NULL);
	quiet();
	cpus_process(vm.cpus); /* every slot has its vCPU */
	assert_int_equal(atomic_load(&kvm.created), 4);
	assert_int_equal(atomic_load(&kvm.cpuid_set[3]), 1);
	assert_int_equal(cpus_next_timeout_ms(vm.cpus), -1);
}

/*
 * A spare KVM refuses to create ends the refills (with a warning); an add then creates its
 * vCPU itself, and no refill follows it. While the VM stops, none is created.
 */
static void test_spare_vcpus_fallback(void **state)
{
	(void)state;
	quiet();
	stopping = true;
	cpus_process(vm.cpus);
	assert_int_equal(atomic_load(&kvm.created), 2);
	stopping = false;
	kvm.fail_create = true;
	cpus_process(vm.cpus);
	assert_true(kvm.fd[2] < 0);
	kvm.fail_create = false;
	cpus_process(vm.cpus);
	assert_int_equal(atomic_load(&kvm.created), 2);
	host_add(2, NULL);
	assert_int_equal(atomic_load(&kvm.created), 3);
	assert_int_equal(atomic_load(&kvm.cpuid_set[2]), 1); /* by its thread */
	quiet();
	cpus_process(vm.cpus);
	assert_true(kvm.fd[3] < 0);
	assert_int_equal(cpus_next_timeout_ms(vm.cpus), -1);
}

/* One spare per pass of the main loop, which comes back at once for the next. */
static void test_spare_vcpus_one_per_pass(void **state)
{
	(void)state;
	quiet();
	cpus_process(vm.cpus);
	assert_int_equal(atomic_load(&kvm.created), 3);
	assert_int_equal(cpus_next_timeout_ms(vm.cpus), 0);
	cpus_process(vm.cpus);
	assert_int_equal(atomic_load(&kvm.created), 4);
	assert_true(kvm.fd[2] >= 0 && kvm.fd[3] >= 0);
	assert_int_equal(cpus_next_timeout_ms(vm.cpus), -1);
}

/*
 * A spare whose setup fails after KVM created it (its kvm_run mapping) keeps its fd: KVM
 * would refuse the id again. The refills end; the slot's add finishes the setup on that fd.
 */
static void test_spare_vcpu_half_created(void **state)
{
	(void)state;
	quiet();
	kvm.fail_mmap = true;
	cpus_process(vm.cpus);
	assert_int_equal(atomic_load(&kvm.created), 3);
	assert_true(kvm.fd[2] >= 0);
	assert_false(cpus_present(vm.cpus, 2));
	cpus_process(vm.cpus);
	assert_int_equal(atomic_load(&kvm.created), 3);
	host_add(2, NULL); /* the mock fails the test if KVM_CREATE_VCPU comes again */
	assert_int_equal(atomic_load(&kvm.created), 3);
	assert_int_equal(atomic_load(&kvm.cpuid_set[2]), 1); /* by its thread */
}

UNIT_MAIN(NULL, NULL, UNIT_TEST_FIXTURE(test_add_and_remove_refusals),
	  UNIT_TEST_FIXTURE(test_eject_parks_and_forgets),
	  UNIT_TEST_FIXTURE(test_report_times_the_request),
	  UNIT_TEST_FIXTURE(test_refused_removal_is_reported_by_the_main_loop),
	  UNIT_TEST_FIXTURE(test_direct_start), UNIT_TEST_FIXTURE(test_pause_reset_resume),
	  UNIT_TEST_FIXTURE(test_start_request_does_not_survive_park),
	  UNIT_TEST_FIXTURE(test_direct_start_never_signals_a_joined_thread),
	  cmocka_unit_test_setup_teardown(test_spare_vcpus, setup_spare, teardown),
	  cmocka_unit_test_setup_teardown(test_spare_vcpus_fallback, setup_spare, teardown),
	  cmocka_unit_test_setup_teardown(test_spare_vcpus_one_per_pass, setup_spares, teardown),
	  cmocka_unit_test_setup_teardown(test_spare_vcpu_half_created, setup_spare, teardown))
