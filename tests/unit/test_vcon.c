// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/devices/virtio_console.c, the virtio console and agent channel
 * devices, with their MMIO windows on a real bus and guest RAM, the guest's vCPUs played by
 * host threads: a guest that keeps refilling its transmitq while the device drains it, and
 * a vCPU holding the device while the main loop has bytes for the guest; a console whose
 * reader stalls.
 */
#include "tests/unit/unit.h"

#include <fcntl.h>
#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_ring.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "vmm/console.h"
#include "vmm/devices/virtio_console.h"
#include "vmm/vm.h"
#include "plugvm_agent.h"
#include "plugvm_virtio.h"

#define RAM   (1u << 20)
#define QSIZE 8u
#define DESC  0x10000u /* + q * 0x800 */
#define AVAIL 0x11000u /* + q * 0x100 */
#define USED  0x12000u /* + q * 0x100 */
#define BUF   0x20000u /* + q * 0x8000 + i * 0x1000 */

static struct vm_config cfg = { .nr_cpus = 1, .max_cpus = 1 };
static struct vm vm;

/* ---- the agent's end of the channel (KVM's interrupt line is the shim's stub) ---------- */

static struct {
	atomic_uint calls; /* agent_rx() calls (one per transmitted segment) */
	unsigned refill; /* this many more calls post another chain, as a second vCPU */
	bool hold; /* the next call keeps the device until released */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool holding, release;
} agent;

static void post_tx_chain(void);

static void agent_rx(void *opaque, const uint8_t *buf, size_t len)
{
	(void)opaque;
	(void)buf;
	(void)len;
	atomic_fetch_add(&agent.calls, 1);
	/* A guest refilling its ring from another vCPU while this one is being drained. */
	if (agent.refill) {
		agent.refill--;
		post_tx_chain();
	}
	if (agent.hold) {
		agent.hold = false;
		pthread_mutex_lock(&agent.lock);
		agent.holding = true;
		pthread_cond_broadcast(&agent.cond);
		while (!agent.release)
			pthread_cond_wait(&agent.cond, &agent.lock);
		pthread_mutex_unlock(&agent.lock);
	}
}

/* ---- the guest's driver ------------------------------------------------------------- */

/* The device the test drives: the agent channel unless a test says otherwise. */
static uint64_t base = PLUGVM_VIRTIO_MMIO_BASE + PLUGVM_VIRTIO_MMIO_STRIDE;
static uint32_t tx_len = 64; /* bytes in each transmit buffer */

static void *ram(uint64_t gpa)
{
	return mem_gpa_ptr(&vm.mem, gpa, 1);
}

static void wr(uint64_t off, uint32_t v)
{
	assert_true(bus_dispatch(&vm.mmio, 0, base + off, (uint8_t *)&v, 4, 1, true));
}

static uint32_t rd(uint64_t off)
{
	uint32_t v;

	assert_true(bus_dispatch(&vm.mmio, 0, base + off, (uint8_t *)&v, 4, 1, false));
	return v;
}

static void setup_queue(unsigned q)
{
	unsigned i;

	wr(VIRTIO_MMIO_QUEUE_SEL, q);
	wr(VIRTIO_MMIO_QUEUE_NUM, QSIZE);
	wr(VIRTIO_MMIO_QUEUE_DESC_LOW, DESC + q * 0x800);
	wr(VIRTIO_MMIO_QUEUE_DESC_HIGH, 0);
	wr(VIRTIO_MMIO_QUEUE_AVAIL_LOW, AVAIL + q * 0x100);
	wr(VIRTIO_MMIO_QUEUE_AVAIL_HIGH, 0);
	wr(VIRTIO_MMIO_QUEUE_USED_LOW, USED + q * 0x100);
	wr(VIRTIO_MMIO_QUEUE_USED_HIGH, 0);
	wr(VIRTIO_MMIO_QUEUE_READY, 1);
	for (i = 0; i < QSIZE; i++) {
		struct vring_desc *d = ram(DESC + q * 0x800 + i * 16);

		d->addr = BUF + q * 0x8000 + i * 0x1000;
		d->len = q == PLUGVM_VIRTIO_RXQ ? 0x1000 : tx_len;
		d->flags = q == PLUGVM_VIRTIO_RXQ ? VRING_DESC_F_WRITE : 0;
		d->next = 0;
	}
}

/* The device at `base`, live, with both queues of QSIZE one-descriptor chains. */
static void bring_up(void)
{
	uint32_t ok = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER;

	wr(VIRTIO_MMIO_STATUS, 0);
	wr(VIRTIO_MMIO_STATUS, ok);
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, 1); /* VERSION_1 */
	wr(VIRTIO_MMIO_STATUS, ok | VIRTIO_CONFIG_S_FEATURES_OK);
	setup_queue(PLUGVM_VIRTIO_RXQ);
	setup_queue(PLUGVM_VIRTIO_TXQ);
	wr(VIRTIO_MMIO_STATUS, ok | VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK);
	assert_true(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_DRIVER_OK);
}

static uint16_t *avail_idx(unsigned q)
{
	return ram(AVAIL + q * 0x100 + 2);
}

static uint16_t used_idx(unsigned q)
{
	return __atomic_load_n((uint16_t *)ram(USED + q * 0x100 + 2), __ATOMIC_ACQUIRE);
}

/* Put the next descriptor on queue q's avail ring (no notify). */
static void post(unsigned q)
{
	uint16_t idx = *avail_idx(q);

	((uint16_t *)ram(AVAIL + q * 0x100 + 4))[idx % QSIZE] = (uint16_t)(idx % QSIZE);
	__atomic_store_n(avail_idx(q), (uint16_t)(idx + 1), __ATOMIC_RELEASE);
}

/* A second vCPU's transmit: one more chain, as soon as the device returned one. */
static void post_tx_chain(void)
{
	if ((uint16_t)(*avail_idx(PLUGVM_VIRTIO_TXQ) - used_idx(PLUGVM_VIRTIO_TXQ)) < QSIZE)
		post(PLUGVM_VIRTIO_TXQ);
}

static int setup(void **state)
{
	(void)state;
	memset(&vm, 0, sizeof(vm));
	memset(&agent, 0, sizeof(agent));
	pthread_mutex_init(&agent.lock, NULL);
	pthread_cond_init(&agent.cond, NULL);
	vm.cfg = &cfg;
	vm.mmio.name = "mmio";
	assert_int_equal(mem_init(&vm.mem, RAM), 0);
	vm.console = console_create(STDOUT_FILENO);
	assert_int_equal(console_start(vm.console), 0);
	assert_non_null(vm.console);
	assert_int_equal(virtio_devices_init(&vm), 0);
	virtio_agent_set_ops(&vm, &(struct virtio_agent_ops){ .rx = agent_rx });
	bring_up();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	virtio_devices_exit(&vm);
	console_destroy(vm.console);
	mem_destroy(&vm.mem);
	return 0;
}

/*
 * A guest refilling its transmitq from a second vCPU cannot keep one notify (and the
 * device lock) for ever: drain_tx() takes at most a ring's worth per notify; the rest
 * waits for the next notify.
 */
static void test_notify_has_a_budget(void **state)
{
	unsigned i;

	(void)state;
	for (i = 0; i < QSIZE; i++)
		post(PLUGVM_VIRTIO_TXQ);
	agent.refill = 100000; /* "for ever", but a broken device must still let the test end */
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, PLUGVM_VIRTIO_TXQ);
	assert_true(atomic_load(&agent.calls) <= QSIZE);
	/* The chains left are taken by the next notifies, a ring's worth each. */
	agent.refill = 0;
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, PLUGVM_VIRTIO_TXQ);
	assert_true(atomic_load(&agent.calls) <= 2 * QSIZE);
	assert_int_equal(used_idx(PLUGVM_VIRTIO_TXQ), *avail_idx(PLUGVM_VIRTIO_TXQ));
}

static void *vcpu_notify(void *arg)
{
	(void)arg;
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, PLUGVM_VIRTIO_TXQ);
	return NULL;
}

struct send_call {
	atomic_bool done;
	int ret;
};

static void *main_loop_send(void *arg)
{
	struct send_call *s = arg;
	struct plugvm_agent_msg m = { .hdr.magic = PLUGVM_AGENT_MAGIC };

	s->ret = virtio_agent_send(&vm, &m, sizeof(m));
	atomic_store(&s->done, true);
	return NULL;
}

/*
 * The main loop's agent request (and console input) never waits for the device lock a
 * vCPU holds while it works through the rings (the guest could keep it busy, and the main
 * loop answers QMP and SIGTERM): it returns at once, and the vCPU holding the device
 * delivers the bytes when it lets go.
 */
static void test_main_loop_never_waits_for_a_busy_device(void **state)
{
	struct send_call call = { .ret = -1 };
	pthread_t vcpu, main_loop;
	unsigned waited_ms = 0;

	(void)state;
	post(PLUGVM_VIRTIO_RXQ); /* the driver's receive buffer */
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, PLUGVM_VIRTIO_RXQ);
	post(PLUGVM_VIRTIO_TXQ);
	agent.hold = true;
	assert_int_equal(pthread_create(&vcpu, NULL, vcpu_notify, NULL), 0);
	pthread_mutex_lock(&agent.lock);
	while (!agent.holding)
		pthread_cond_wait(&agent.cond, &agent.lock);
	pthread_mutex_unlock(&agent.lock);
	/* The vCPU is inside the device. */
	assert_int_equal(pthread_create(&main_loop, NULL, main_loop_send, &call), 0);
	while (!atomic_load(&call.done) && waited_ms < 2000) {
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
		waited_ms++;
	}
	pthread_mutex_lock(&agent.lock);
	agent.release = true;
	pthread_cond_broadcast(&agent.cond);
	pthread_mutex_unlock(&agent.lock);
	pthread_join(vcpu, NULL);
	pthread_join(main_loop, NULL);
	assert_true(waited_ms < 2000); /* returned while the vCPU still held the device */
	assert_int_equal(call.ret, 0);
	/* Delivered by the vCPU on its way out of the device. */
	assert_int_equal(used_idx(PLUGVM_VIRTIO_RXQ), 1);
	assert_int_equal(((struct vring_used_elem *)ram(USED + 4))->len, PLUGVM_AGENT_MSG_SIZE);
	assert_int_equal(*(uint32_t *)ram(BUF), PLUGVM_AGENT_MAGIC);
}

static atomic_bool console_done;

/* A vCPU printing 2 MiB through the virtio console, a ring's worth per notify. */
static void *vcpu_prints(void *arg)
{
	unsigned round, i;

	(void)arg;
	for (round = 0; round < 64; round++) {
		for (i = 0; i < QSIZE; i++)
			post(PLUGVM_VIRTIO_TXQ);
		wr(VIRTIO_MMIO_QUEUE_NOTIFY, PLUGVM_VIRTIO_TXQ);
	}
	atomic_store(&console_done, true);
	return NULL;
}

/*
 * A reader that stops reading stalls neither the vCPU nor (through the device lock) the
 * main loop: the guest's output goes to the console's bounded buffer, never to the fd
 * under the device lock; the vCPU goes on, the excess is dropped and counted.
 */
static void test_console_never_waits_for_its_reader(void **state)
{
	static char sink[1 << 16];
	struct console_stats st;
	int p[2], saved = dup(STDOUT_FILENO);
	unsigned waited_ms = 0;
	pthread_t vcpu;

	(void)state;
	/* stdout becomes a pipe nobody reads; the console device is the one driven. */
	fflush(stdout);
	assert_int_equal(pipe(p), 0);
	assert_true(dup2(p[1], STDOUT_FILENO) >= 0);
	base = PLUGVM_VIRTIO_MMIO_BASE;
	tx_len = 0x1000;
	bring_up();
	atomic_store(&console_done, false);
	assert_int_equal(pthread_create(&vcpu, NULL, vcpu_prints, NULL), 0);
	while (!atomic_load(&console_done) && waited_ms < 5000) {
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
		waited_ms++;
	}
	/* Read again: a blocked vCPU (the old code) finishes, the console's buffer empties. */
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	for (;;) {
		if (read(p[0], sink, sizeof(sink)) > 0)
			continue;
		console_get_stats(vm.console, &st);
		if (atomic_load(&console_done) && !st.queued)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	pthread_join(vcpu, NULL);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(p[0]);
	close(p[1]);
	base = PLUGVM_VIRTIO_MMIO_BASE + PLUGVM_VIRTIO_MMIO_STRIDE;
	tx_len = 64;
	assert_true(waited_ms < 5000); /* the vCPU never waited for the reader */
	assert_int_equal(used_idx(PLUGVM_VIRTIO_TXQ), 64 * QSIZE);
	assert_true(st.dropped > 0);
}

UNIT_MAIN(NULL, NULL, UNIT_TEST_FIXTURE(test_notify_has_a_budget),
	  UNIT_TEST_FIXTURE(test_main_loop_never_waits_for_a_busy_device),
	  UNIT_TEST_FIXTURE(test_console_never_waits_for_its_reader))
