// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/devices/virtio_mmio.c (the virtio-mmio v2 transport and split
 * virtqueues) and vmm/control/agent_frame.c (agent message framing), driven like a guest driver
 * would: identification registers, feature negotiation (accepted, and refused for
 * features nobody offered or without VERSION_1), queue setup checks, chains through the
 * rings, and every kind of hostile ring the device must survive (descriptor outside RAM,
 * empty buffer, wrong direction, INDIRECT, loops, overlong chains, avail index jumps,
 * head out of range) ending in NEEDS_RESET until a reset. Framing: split messages, junk
 * before a magic, a magic split across feeds, and the checks on message headers.
 */
#include "tests/unit/unit.h"

#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_ring.h>
#include <stdlib.h>

#include "vmm/control/agent.h"
#include "vmm/devices/virtio_mmio.h"

#define RAM   (1u << 20)
#define QSIZE 8u
#define DESC  0x10000u
#define AVAIL 0x11000u
#define USED  0x12000u
#define BUF   0x20000u

struct fixture {
	struct guest_mem mem;
	struct virtio_mmio dev;
	int irq;
	unsigned irq_changes, notified, resets;
	struct virtq_chain chain;
	int last_pop;
};

static void set_irq(void *opaque, int level)
{
	struct fixture *f = opaque;

	f->irq = level;
	f->irq_changes++;
}

static void on_notify(struct virtio_mmio *d, unsigned q)
{
	struct fixture *f = d->backend;

	f->notified++;
	/* Behave like the console's transmitq: take every chain, return it. */
	while ((f->last_pop = virtq_pop(d, q, q == 0, &f->chain)) > 0)
		virtq_push(d, q, f->chain.head, q == 0 ? f->chain.total : 0);
	if (f->last_pop == 0)
		virtq_notify_used(d, q);
}

static void on_reset(struct virtio_mmio *d)
{
	((struct fixture *)d->backend)->resets++;
}

static const uint8_t config[4] = { 1, 2, 3, 4 };
static const struct virtio_mmio_ops ops = {
	.device_id = VIRTIO_ID_CONSOLE,
	.nr_queues = 2,
	.config = config,
	.config_len = sizeof(config),
	.notify = on_notify,
	.reset = on_reset,
};

static uint32_t rd(struct fixture *f, uint64_t off)
{
	uint32_t v;

	virtio_mmio_access(&f->dev, off, (uint8_t *)&v, 4, false);
	return v;
}

static void wr(struct fixture *f, uint64_t off, uint32_t v)
{
	virtio_mmio_access(&f->dev, off, (uint8_t *)&v, 4, true);
}

static void *ram(struct fixture *f, uint64_t gpa)
{
	return mem_gpa_ptr(&f->mem, gpa, 1);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(mem_init(&f->mem, RAM), 0);
	virtio_mmio_init(&f->dev, "test", &ops, f, &f->mem, set_irq, f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	virtio_mmio_destroy(&f->dev);
	mem_destroy(&f->mem);
	free(f);
	return 0;
}

/* Negotiate `features`; returns the status read back. */
static uint32_t negotiate(struct fixture *f, uint64_t features)
{
	wr(f, VIRTIO_MMIO_STATUS, 0);
	wr(f, VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	wr(f, VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	wr(f, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	wr(f, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)features);
	wr(f, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	wr(f, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(features >> 32));
	wr(f, VIRTIO_MMIO_STATUS,
	   VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK);
	return rd(f, VIRTIO_MMIO_STATUS);
}

static void setup_queue(struct fixture *f, unsigned q, uint32_t num, uint64_t desc)
{
	wr(f, VIRTIO_MMIO_QUEUE_SEL, q);
	wr(f, VIRTIO_MMIO_QUEUE_NUM, num);
	wr(f, VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)desc);
	wr(f, VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(desc >> 32));
	wr(f, VIRTIO_MMIO_QUEUE_AVAIL_LOW, AVAIL + q * 0x100);
	wr(f, VIRTIO_MMIO_QUEUE_AVAIL_HIGH, 0);
	wr(f, VIRTIO_MMIO_QUEUE_USED_LOW, USED + q * 0x100);
	wr(f, VIRTIO_MMIO_QUEUE_USED_HIGH, 0);
	wr(f, VIRTIO_MMIO_QUEUE_READY, 1);
}

/* A live device with both queues of QSIZE entries. */
static void bring_up(struct fixture *f)
{
	assert_true(negotiate(f, 1ull << VIRTIO_F_VERSION_1) & VIRTIO_CONFIG_S_FEATURES_OK);
	setup_queue(f, 0, QSIZE, DESC);
	setup_queue(f, 1, QSIZE, DESC + 0x800);
	assert_int_equal(rd(f, VIRTIO_MMIO_QUEUE_READY), 1);
	wr(f, VIRTIO_MMIO_STATUS,
	   VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK |
	       VIRTIO_CONFIG_S_DRIVER_OK);
	assert_true(rd(f, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_DRIVER_OK);
}

static struct vring_desc *desc(struct fixture *f, unsigned q, unsigned i)
{
	return (struct vring_desc *)ram(f, DESC + q * 0x800 + i * 16);
}

/* Put `head` on queue q's avail ring and notify. */
static void post(struct fixture *f, unsigned q, uint16_t head)
{
	uint16_t *avail = ram(f, AVAIL + q * 0x100);

	avail[2 + (avail[1] % QSIZE)] = head;
	avail[1]++;
	wr(f, VIRTIO_MMIO_QUEUE_NOTIFY, q);
}

static uint16_t used_idx(struct fixture *f, unsigned q)
{
	return ((uint16_t *)ram(f, USED + q * 0x100))[1];
}

static void test_identification(void **state)
{
	struct fixture *f = *state;
	uint8_t b[2];

	assert_int_equal(rd(f, VIRTIO_MMIO_MAGIC_VALUE), 0x74726976);
	assert_int_equal(rd(f, VIRTIO_MMIO_VERSION), 2);
	assert_int_equal(rd(f, VIRTIO_MMIO_DEVICE_ID), VIRTIO_ID_CONSOLE);
	wr(f, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	assert_int_equal(rd(f, VIRTIO_MMIO_DEVICE_FEATURES), 1); /* VERSION_1 is bit 32 */
	wr(f, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	assert_int_equal(rd(f, VIRTIO_MMIO_DEVICE_FEATURES), 0);
	wr(f, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 7);
	assert_int_equal(rd(f, VIRTIO_MMIO_DEVICE_FEATURES), 0);
	wr(f, VIRTIO_MMIO_QUEUE_SEL, 0);
	assert_int_equal(rd(f, VIRTIO_MMIO_QUEUE_NUM_MAX), PLUGVM_VIRTIO_QUEUE_MAX);
	wr(f, VIRTIO_MMIO_QUEUE_SEL, 2); /* no such queue */
	assert_int_equal(rd(f, VIRTIO_MMIO_QUEUE_NUM_MAX), 0);
	/* Config space: any width; beyond it zeros; writes ignored. */
	virtio_mmio_access(&f->dev, VIRTIO_MMIO_CONFIG + 1, b, 2, false);
	assert_int_equal(b[0], 2);
	assert_int_equal(b[1], 3);
	virtio_mmio_access(&f->dev, VIRTIO_MMIO_CONFIG + 3, b, 2, false);
	assert_int_equal(b[0], 4);
	assert_int_equal(b[1], 0);
	/* A register read that is not 32 bits wide gives zeros and changes nothing. */
	virtio_mmio_access(&f->dev, VIRTIO_MMIO_MAGIC_VALUE, b, 2, false);
	assert_int_equal(b[0], 0);
}

static void test_feature_negotiation(void **state)
{
	struct fixture *f = *state;

	/* Without VERSION_1 (a legacy driver) and with bits nobody offered: refused. */
	assert_false(negotiate(f, 0) & VIRTIO_CONFIG_S_FEATURES_OK);
	assert_false(
	    negotiate(f, (1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_RING_F_INDIRECT_DESC)) &
	    VIRTIO_CONFIG_S_FEATURES_OK);
	assert_false(negotiate(f, (1ull << VIRTIO_F_VERSION_1) | 1) & VIRTIO_CONFIG_S_FEATURES_OK);
	/* DRIVER_OK without FEATURES_OK does not make the device live. */
	wr(f, VIRTIO_MMIO_STATUS,
	   VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_DRIVER_OK);
	assert_false(rd(f, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_DRIVER_OK);
	/* Accepted. */
	assert_true(negotiate(f, 1ull << VIRTIO_F_VERSION_1) & VIRTIO_CONFIG_S_FEATURES_OK);
	/* Features cannot change after FEATURES_OK; status bits cannot be taken back. */
	wr(f, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	wr(f, VIRTIO_MMIO_DRIVER_FEATURES, 0xffffffff);
	assert_int_equal(f->dev.driver_features, 1ull << VIRTIO_F_VERSION_1);
	wr(f, VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	assert_true(rd(f, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK);
	/* A reset clears everything. */
	wr(f, VIRTIO_MMIO_STATUS, 0);
	assert_int_equal(rd(f, VIRTIO_MMIO_STATUS), 0);
}

static void test_queue_setup_checks(void **state)
{
	struct fixture *f = *state;

	assert_true(negotiate(f, 1ull << VIRTIO_F_VERSION_1) & VIRTIO_CONFIG_S_FEATURES_OK);
	setup_queue(f, 0, 6, DESC); /* not a power of two */
	assert_int_equal(rd(f, VIRTIO_MMIO_QUEUE_READY), 0);
	assert_true(rd(f, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET);
	assert_true(negotiate(f, 1ull << VIRTIO_F_VERSION_1) & VIRTIO_CONFIG_S_FEATURES_OK);
	assert_false(rd(f, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET);
	setup_queue(f, 0, 512, DESC); /* beyond QueueNumMax */
	assert_int_equal(rd(f, VIRTIO_MMIO_QUEUE_READY), 0);
	assert_true(negotiate(f, 1ull << VIRTIO_F_VERSION_1) & VIRTIO_CONFIG_S_FEATURES_OK);
	setup_queue(f, 0, QSIZE, RAM - 16); /* descriptor table runs off the end of RAM */
	assert_int_equal(rd(f, VIRTIO_MMIO_QUEUE_READY), 0);
	assert_true(negotiate(f, 1ull << VIRTIO_F_VERSION_1) & VIRTIO_CONFIG_S_FEATURES_OK);
	setup_queue(f, 0, QSIZE, DESC + 8); /* misaligned */
	assert_int_equal(rd(f, VIRTIO_MMIO_QUEUE_READY), 0);
	assert_true(negotiate(f, 1ull << VIRTIO_F_VERSION_1) & VIRTIO_CONFIG_S_FEATURES_OK);
	setup_queue(f, 0, QSIZE, 0xfffffffff000ull); /* far outside */
	assert_int_equal(rd(f, VIRTIO_MMIO_QUEUE_READY), 0);
	/* A ready queue is not reconfigured. */
	bring_up(f);
	wr(f, VIRTIO_MMIO_QUEUE_SEL, 0);
	wr(f, VIRTIO_MMIO_QUEUE_DESC_LOW, 0x50000);
	assert_int_equal(f->dev.vq[0].desc, DESC);
}

static void test_chains_and_interrupts(void **state)
{
	struct fixture *f = *state;
	uint16_t *avail;

	bring_up(f);
	/* Two-descriptor device-readable chain on queue 1. */
	*desc(f, 1, 0) = (struct vring_desc){ BUF, 100, VRING_DESC_F_NEXT, 1 };
	*desc(f, 1, 1) = (struct vring_desc){ BUF + 200, 50, 0, 0 };
	post(f, 1, 0);
	assert_int_equal(f->last_pop, 0);
	assert_int_equal(f->chain.nr, 2);
	assert_int_equal(f->chain.total, 150);
	assert_int_equal(used_idx(f, 1), 1);
	assert_int_equal(rd(f, VIRTIO_MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_VRING);
	assert_int_equal(f->irq, 1);
	wr(f, VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_VRING);
	assert_int_equal(f->irq, 0);
	/* The driver can suppress the interrupt. */
	avail = ram(f, AVAIL + 0x100);
	avail[0] = VRING_AVAIL_F_NO_INTERRUPT;
	post(f, 1, 1);
	assert_int_equal(used_idx(f, 1), 2);
	assert_int_equal(f->irq, 0);
	/* Many entries, wrapping the 16-bit index around the ring more than once. */
	avail[0] = 0;
	for (unsigned i = 0; i < 3 * QSIZE; i++)
		post(f, 1, 1);
	assert_int_equal(used_idx(f, 1), 2 + 3 * QSIZE);
	/* A device-writable buffer on queue 0 gets its length back. */
	*desc(f, 0, 3) = (struct vring_desc){ BUF, 64, VRING_DESC_F_WRITE, 0 };
	post(f, 0, 3);
	assert_int_equal(used_idx(f, 0), 1);
	assert_int_equal(((struct vring_used_elem *)((uint8_t *)ram(f, USED) + 4))[0].len, 64);
	assert_false(rd(f, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET);
}

/* Post the chain at `head` on queue 1 and expect the device to fail; then recover. */
static void expect_broken(struct fixture *f, uint16_t head)
{
	uint64_t bad = f->dev.bad_rings;
	unsigned resets = f->resets;

	post(f, 1, head);
	assert_int_equal(f->last_pop, -1);
	assert_int_equal(f->dev.bad_rings, bad + 1);
	assert_true(rd(f, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET);
	assert_true(rd(f, VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG);
	assert_true(f->resets > resets);
	/* Failed: further notifications are ignored until the driver resets. */
	f->last_pop = 7;
	wr(f, VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	assert_int_equal(f->last_pop, 7);
	memset(ram(f, AVAIL), 0, 0x200);
	memset(ram(f, USED), 0, 0x200);
	bring_up(f);
	assert_false(rd(f, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET);
}

static void test_hostile_rings(void **state)
{
	struct fixture *f = *state;
	uint16_t *avail;
	unsigned i;

	bring_up(f);
	*desc(f, 1, 0) = (struct vring_desc){ RAM - 10, 100, 0, 0 }; /* runs off RAM */
	expect_broken(f, 0);
	*desc(f, 1, 0) = (struct vring_desc){ 0xfee00000, 4, 0, 0 }; /* the LAPIC page */
	expect_broken(f, 0);
	*desc(f, 1, 0) = (struct vring_desc){ BUF, 0, 0, 0 }; /* empty */
	expect_broken(f, 0);
	*desc(f, 1, 0) = (struct vring_desc){ BUF, 10, VRING_DESC_F_WRITE, 0 }; /* direction */
	expect_broken(f, 0);
	*desc(f, 1, 0) = (struct vring_desc){ BUF, 16, VRING_DESC_F_INDIRECT, 0 };
	expect_broken(f, 0);
	*desc(f, 1, 0) = (struct vring_desc){ BUF, 10, VRING_DESC_F_NEXT, 1 }; /* loop 0->1->0 */
	*desc(f, 1, 1) = (struct vring_desc){ BUF, 10, VRING_DESC_F_NEXT, 0 };
	expect_broken(f, 0);
	*desc(f, 1, 0) = (struct vring_desc){ BUF, 10, VRING_DESC_F_NEXT, 0 }; /* self loop */
	expect_broken(f, 0);
	*desc(f, 1, 0) = (struct vring_desc){ BUF, 10, VRING_DESC_F_NEXT, QSIZE }; /* next range */
	expect_broken(f, 0);
	expect_broken(f, QSIZE + 3); /* head out of range */
	for (i = 0; i < QSIZE; i++) /* a chain through every descriptor, then one more */
		*desc(f, 1, i) =
		    (struct vring_desc){ BUF, 10, VRING_DESC_F_NEXT, (uint16_t)((i + 1) % QSIZE) };
	expect_broken(f, 0);
	*desc(f, 1, 0) = (struct vring_desc){ BUF, 600000, VRING_DESC_F_NEXT, 1 }; /* > 1 MiB */
	*desc(f, 1, 1) = (struct vring_desc){ BUF, 600000, 0, 0 };
	expect_broken(f, 0);
	/* The avail index jumps more than the queue size ahead. */
	*desc(f, 1, 0) = (struct vring_desc){ BUF, 10, 0, 0 };
	avail = ram(f, AVAIL + 0x100);
	avail[1] = QSIZE + 1;
	wr(f, VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	assert_int_equal(f->last_pop, -1);
	assert_true(rd(f, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET);
	/* NEEDS_RESET is the device's bit: the driver cannot set or clear it by a write. */
	wr(f, VIRTIO_MMIO_STATUS, rd(f, VIRTIO_MMIO_STATUS) & ~VIRTIO_CONFIG_S_NEEDS_RESET);
	assert_true(rd(f, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET);
	memset(ram(f, AVAIL), 0, 0x200);
	bring_up(f);
	/* And after all that, a good chain works. */
	*desc(f, 1, 0) = (struct vring_desc){ BUF, 10, 0, 0 };
	post(f, 1, 0);
	assert_int_equal(f->last_pop, 0);
	assert_int_equal(used_idx(f, 1), 1);
}

static void test_register_abuse(void **state)
{
	struct fixture *f = *state;

	bring_up(f);
	/* Notifying queues that do not exist, writing read-only registers, odd selectors. */
	wr(f, VIRTIO_MMIO_QUEUE_NOTIFY, 9);
	wr(f, VIRTIO_MMIO_QUEUE_NOTIFY, 0xffffffff);
	wr(f, VIRTIO_MMIO_MAGIC_VALUE, 0);
	wr(f, VIRTIO_MMIO_INTERRUPT_STATUS, 3);
	wr(f, VIRTIO_MMIO_QUEUE_SEL, 0xffff);
	wr(f, VIRTIO_MMIO_QUEUE_NUM, 4);
	wr(f, VIRTIO_MMIO_QUEUE_READY, 1);
	assert_int_equal(rd(f, VIRTIO_MMIO_QUEUE_READY), 0);
	wr(f, 0xfff, 1); /* config space beyond the config: ignored */
	assert_int_equal(rd(f, VIRTIO_MMIO_MAGIC_VALUE), 0x74726976);
	assert_true(rd(f, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_DRIVER_OK);
}

/* ---- framing ---- */

struct frames {
	unsigned n;
	uint32_t ids[16];
};

static void on_frame(void *ctx, const struct plugvm_agent_msg *m)
{
	struct frames *fr = ctx;

	if (fr->n < 16)
		fr->ids[fr->n] = m->hdr.id;
	fr->n++;
}

static void make_msg(struct plugvm_agent_msg *m, uint32_t id)
{
	memset(m, 0, sizeof(*m));
	m->hdr.magic = PLUGVM_AGENT_MAGIC;
	m->hdr.version = PLUGVM_AGENT_VERSION;
	m->hdr.type = PLUGVM_AGENT_HELLO;
	m->hdr.id = id;
	m->hdr.flags = PLUGVM_AGENT_F_REPLY;
}

static void test_framing(void **state)
{
	struct agent_framer fr = { 0 };
	struct plugvm_agent_msg m[3];
	struct frames got = { 0 };
	uint8_t junk[37], stream[3 * sizeof(m[0]) + sizeof(junk)];
	size_t i, off = 0;

	(void)state;
	for (i = 0; i < 3; i++)
		make_msg(&m[i], 10 + (uint32_t)i);
	memset(junk, 0x41, sizeof(junk));
	junk[5] = 'A'; /* a partial magic ("AG") inside the junk */
	junk[6] = 'G';
	memcpy(stream + off, &m[0], sizeof(m[0]));
	off += sizeof(m[0]);
	memcpy(stream + off, junk, sizeof(junk));
	off += sizeof(junk);
	memcpy(stream + off, &m[1], sizeof(m[1]));
	off += sizeof(m[1]);
	memcpy(stream + off, &m[2], sizeof(m[2]));
	off += sizeof(m[2]);
	/* Byte by byte: every split point, including inside the magic. */
	for (i = 0; i < off; i++)
		agent_framer_feed(&fr, stream + i, 1, on_frame, &got);
	assert_int_equal(got.n, 3);
	assert_int_equal(got.ids[0], 10);
	assert_int_equal(got.ids[1], 11);
	assert_int_equal(got.ids[2], 12);
	assert_int_equal(fr.skipped, sizeof(junk));
	/* All at once. */
	memset(&got, 0, sizeof(got));
	agent_framer_reset(&fr);
	agent_framer_feed(&fr, stream, off, on_frame, &got);
	assert_int_equal(got.n, 3);
	/* Pure junk never produces a message. */
	memset(&got, 0, sizeof(got));
	memset(stream, 0xff, sizeof(stream));
	agent_framer_feed(&fr, stream, sizeof(stream), on_frame, &got);
	assert_int_equal(got.n, 0);
	assert_true(fr.have < 4);
}

static void test_message_checks(void **state)
{
	struct plugvm_agent_msg m;

	(void)state;
	make_msg(&m, 1);
	assert_null(agent_msg_check(&m));
	m.hdr.version = 2;
	assert_contains(agent_msg_check(&m), "version");
	make_msg(&m, 1);
	m.hdr.len = PLUGVM_AGENT_PAYLOAD + 1;
	assert_contains(agent_msg_check(&m), "length");
	make_msg(&m, 0);
	assert_contains(agent_msg_check(&m), "id");
	make_msg(&m, 1);
	m.hdr.type = 999;
	assert_contains(agent_msg_check(&m), "unknown");
	make_msg(&m, 1);
	m.hdr.type = PLUGVM_AGENT_TRACE; /* the last request type: its reply is known */
	assert_null(agent_msg_check(&m));
	m.hdr.type = PLUGVM_AGENT_TRACE + 1;
	assert_contains(agent_msg_check(&m), "unknown");
	make_msg(&m, 1);
	m.hdr.flags = 0; /* a request from the guest: the host takes none */
	assert_contains(agent_msg_check(&m), "neither");
	m.hdr.flags = PLUGVM_AGENT_F_REPLY | PLUGVM_AGENT_F_EVENT;
	assert_contains(agent_msg_check(&m), "neither");
	make_msg(&m, 0);
	m.hdr.flags = PLUGVM_AGENT_F_EVENT;
	m.hdr.type = PLUGVM_AGENT_EV_STATE;
	assert_null(agent_msg_check(&m));
	m.hdr.type = PLUGVM_AGENT_SET_TARGET;
	assert_contains(agent_msg_check(&m), "unknown");
	m.hdr.type = PLUGVM_AGENT_EV_LOCKDEP;
	m.hdr.status = -5;
	assert_contains(agent_msg_check(&m), "status");
}

/* One guest string field through agent_str_clean(): the result and the bytes replaced. */
static void clean(const char *in, size_t size, const char *want, size_t bad)
{
	char buf[64];

	memset(buf, 'Z', sizeof(buf));
	memcpy(buf, in, size);
	assert_int_equal(agent_str_clean(buf, size), bad);
	assert_string_equal(buf, want);
}

/* Guest strings for QMP clients: valid UTF-8 without control characters. */
static void test_guest_string_cleaning(void **state)
{
	(void)state;
	clean("cpuhp:online", 13, "cpuhp:online", 0);
	clean("no-nul-here", 6, "no-nu", 0); /* cut at the field's end */
	clean("a\x1b[31mb\r\n\t\x7f", 12, "a?[31mb????", 5);
	clean("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", 15,
	      "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", 0);
	clean("\xc2\x9b\xc2\x85\xc2\xa0", 7, "????\xc2\xa0", 4); /* C1 CSI, NEL; NBSP stays */
	clean("\xc0\xaf\xe0\x80\xaf", 6, "?????", 5); /* overlong '/' */
	clean("\xed\xa0\x80|\xf4\x90\x80\x80", 9, "???|????", 7); /* surrogate, > U+10FFFF */
	clean("ok\xe2\x82", 5, "ok??", 2); /* cut inside a sequence */
	clean("\xe2\x80\xae\xe2\x81\xa6\xe2\x80\xa8x", 11, "?????????x", 9); /* bidi, LS */
	clean("\xff\xfe\x80\xbf", 5, "????", 4);
}

UNIT_MAIN(NULL, NULL, UNIT_TEST_FIXTURE(test_identification),
	  UNIT_TEST_FIXTURE(test_feature_negotiation), UNIT_TEST_FIXTURE(test_queue_setup_checks),
	  UNIT_TEST_FIXTURE(test_chains_and_interrupts), UNIT_TEST_FIXTURE(test_hostile_rings),
	  UNIT_TEST_FIXTURE(test_register_abuse), cmocka_unit_test(test_framing),
	  cmocka_unit_test(test_message_checks), cmocka_unit_test(test_guest_string_cleaning))
