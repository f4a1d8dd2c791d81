// SPDX-License-Identifier: MIT
/*
 * The agent channel's guest end, the transport (see agent.h). Every message is
 * PLUGVM_AGENT_MSG_SIZE bytes and goes out as one transmit buffer, so the host's stream
 * stays framed however the senders interleave. The receive stream is reassembled here
 * (resync on bad magic) and each request handed to the service. dev_mutex is held by the
 * agent thread while it uses the device and by the self-tests that break it on purpose.
 */
#include "drivers/agent.h"

#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_mmio.h>

#include "arch.h"
#include "drivers/virtio_mmio.h"
#include "kernel/errno.h"
#include "kernel/mm.h"
#include "kernel/mutex.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/string.h"
#include "kernel/wait.h"
#include "plugvm_agent.h"
#include "plugvm_virtio.h"

#define MSG_SIZE      PLUGVM_AGENT_MSG_SIZE
#define TX_BUFS	      32
#define RX_BUFS	      8 /* one page of MSG_SIZE buffers */
#define EVENT_WAIT_NS 2000000ull /* events may come with interrupts off: short */
#define REPLY_WAIT_NS 100000000ull
#define AGENT_PRIO    70 /* above workloads and the hotplug driver; below cpuhp/N */

static struct virtio_dev *dev;
static struct virtio_tx tx;
static struct virtio_wait waiter;
static struct completion ready; /* the agent thread said hello and hooked its events */
static struct mutex dev_mutex;
static bool session; /* HELLO sent: events flow */
static const struct agent_service *service; /* what the requests do */

/* The agent thread (or whoever holds dev_mutex): */
static struct virtio_rx rx;
static uint8_t frame[MSG_SIZE];
static size_t frame_have;

static struct agent_stats stats; /* counters, updated with atomics */

static void count(uint64_t *c)
{
	__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

/* ---- sending --------------------------------------------------------------------- */

static int send_msg(uint16_t type, uint32_t flags, uint32_t id, int32_t status, const void *payload,
		    uint32_t len, uint64_t wait_ns)
{
	struct plugvm_agent_msg m;
	int err;

	memset(&m, 0, sizeof(m));
	m.hdr.magic = PLUGVM_AGENT_MAGIC;
	m.hdr.version = PLUGVM_AGENT_VERSION;
	m.hdr.type = type;
	m.hdr.id = id;
	m.hdr.status = status;
	m.hdr.len = len;
	m.hdr.flags = flags;
	if (len)
		memcpy(m.payload, payload, len);
	err = virtio_tx_send(&tx, &m, sizeof(m), wait_ns);
	if (err == -EIO)
		virtio_wait_request_reset(&waiter);
	return err;
}

void agent_send_event(uint16_t type, const void *payload, uint32_t len)
{
	if (!READ_ONCE(session) ||
	    send_msg(type, PLUGVM_AGENT_F_EVENT, 0, 0, payload, len, EVENT_WAIT_NS))
		count(&stats.events_dropped);
	else
		count(&stats.events);
}

static int send_hello(void)
{
	struct plugvm_agent_hello h;
	int err;

	service->hello(&h);
	err =
	    send_msg(PLUGVM_AGENT_HELLO, PLUGVM_AGENT_F_EVENT, 0, 0, &h, sizeof(h), REPLY_WAIT_NS);
	if (!err)
		WRITE_ONCE(session, true);
	return err;
}

/* ---- requests -------------------------------------------------------------------- */

/* Answer one request (magic already checked) through the service. Agent thread. */
static void handle(const struct plugvm_agent_msg *m)
{
	/* The argument is copied out aligned; the reply payload is built in `out`. */
	union {
		uint64_t align;
		uint8_t raw[PLUGVM_AGENT_PAYLOAD];
	} arg, out;
	const struct plugvm_agent_hdr *h = &m->hdr;
	uint32_t len = 0;
	int st;

	count(&stats.requests);
	if (h->version != PLUGVM_AGENT_VERSION || h->len > PLUGVM_AGENT_PAYLOAD || h->flags) {
		/* Replies and events from the host, a future version, or junk. */
		count(&stats.malformed);
		st = PLUGVM_AGENT_EPROTO;
	} else {
		memset(&arg, 0, sizeof(arg));
		memcpy(&arg, m->payload, h->len);
		st = service->request(h->type, &arg, h->len, &out, &len);
	}
	if (!send_msg(h->type, PLUGVM_AGENT_F_REPLY, h->id, st, &out, len, REPLY_WAIT_NS))
		count(&stats.replies);
}

/* ---- receiving --------------------------------------------------------------------- */

static void feed(const uint8_t *p, size_t n)
{
	static const uint8_t magic[4] = { PLUGVM_AGENT_MAGIC & 0xff,
					  (PLUGVM_AGENT_MAGIC >> 8) & 0xff,
					  (PLUGVM_AGENT_MAGIC >> 16) & 0xff,
					  PLUGVM_AGENT_MAGIC >> 24 };

	while (n) {
		size_t k;

		/* Byte by byte only until the magic is in: the rest is copied in one go. */
		if (frame_have < 4) {
			frame[frame_have++] = *p++;
			n--;
			if (frame[frame_have - 1] != magic[frame_have - 1]) {
				/* Drop the first byte, keep any magic prefix the rest forms. */
				count(&stats.skipped_bytes);
				memmove(frame, frame + 1, --frame_have);
				while (frame_have && memcmp(frame, magic, frame_have)) {
					count(&stats.skipped_bytes);
					memmove(frame, frame + 1, --frame_have);
				}
			}
			continue;
		}
		k = MSG_SIZE - frame_have;
		if (k > n)
			k = n;
		memcpy(frame + frame_have, p, k);
		frame_have += k;
		p += k;
		n -= k;
		if (frame_have == MSG_SIZE) {
			struct plugvm_agent_msg m;

			memcpy(&m, frame, sizeof(m));
			frame_have = 0;
			handle(&m);
		}
	}
}

/* Set the device up again and start a new session. dev_mutex held. */
static int reinit(void)
{
	int err;

	WRITE_ONCE(session, false);
	err = virtio_dev_start(dev, &tx);
	if (err)
		return err;
	frame_have = 0;
	if (rx.pool)
		virtio_rx_fill(&rx, true);
	count(&stats.resets);
	return send_hello();
}

/* Take what arrived, answer it, repost the buffers. dev_mutex held. */
static void poll_rx(void)
{
	const uint8_t *p;
	uint32_t len;

	/* A buffer is reposted only after its bytes were handled: one at a time. */
	while ((p = virtio_rx_get(&rx, &len))) {
		feed(p, len);
		virtio_rx_fill(&rx, false);
	}
}

static int agent_main(void *arg)
{
	(void)arg;
	mutex_lock(&dev_mutex);
	virtio_rx_fill(&rx, true);
	if (send_hello())
		pr_warn("agent: cannot say hello to the host\n");
	mutex_unlock(&dev_mutex);
	/* Events from now on; the boot bring-up is over (see agent.h). */
	service->started();
	complete(&ready);
	for (;;) {
		bool reset = virtio_wait_next(&waiter, dev);

		mutex_lock(&dev_mutex);
		if (reset) {
			int err = reinit();

			if (err)
				pr_warn("agent: device reset failed (%d)\n", err);
			else
				printk("agent: device reset and re-initialised\n");
		}
		poll_rx();
		mutex_unlock(&dev_mutex);
	}
	return 0;
}

bool agent_init(void)
{
	dev = virtio_mmio_dev(PLUGVM_VIRTIO_SLOT_AGENT, VIRTIO_ID_CONSOLE);
	if (!dev)
		return false;
	if (virtio_tx_init(&tx, "agent_tx", dev, PLUGVM_VIRTIO_TXQ, TX_BUFS, MSG_SIZE) ||
	    virtio_dev_start(dev, &tx)) {
		pr_warn("agent: cannot start the agent channel\n");
		dev = NULL;
		return false;
	}
	mutex_init(&dev_mutex, "agent_dev");
	virtio_dev_set_irq(dev, virtio_wait_irq, &waiter);
	return true;
}

void agent_start(const struct agent_service *svc)
{
	if (!dev)
		return;
	service = svc;
	_Static_assert(RX_BUFS * MSG_SIZE <= PAGE_SIZE, "receive buffers in one page");
	if (virtio_rx_init(&rx, dev, PLUGVM_VIRTIO_RXQ, RX_BUFS, MSG_SIZE)) {
		pr_warn("agent: no memory for the receive buffers\n");
		return;
	}
	completion_init(&ready);
	WRITE_ONCE(waiter.thread,
		   thread_run("agent", agent_main, NULL, AGENT_PRIO, THREAD_ANY_CPU));
	if (!waiter.thread)
		pr_warn("agent: cannot start the agent thread\n");
	/* What runs after us (self-tests, hotplug) is seen by the host's agent session. */
	else if (!wait_for_completion_timeout(&ready, 1000000000ull))
		pr_warn("agent: the agent thread did not start within 1 s\n");
}

struct virtio_dev *agent_device_claim(void)
{
	if (!dev || !waiter.thread)
		return NULL;
	mutex_lock(&dev_mutex);
	WRITE_ONCE(session, false);
	virtio_tx_pause(&tx, true);
	return dev;
}

int agent_device_release(void)
{
	int err = reinit();

	mutex_unlock(&dev_mutex);
	return err;
}

void agent_get_stats(struct agent_stats *st)
{
	const uint64_t *from = (const uint64_t *)&stats;
	uint64_t *to = (uint64_t *)st;
	size_t i;

	/* Every field is a uint64_t counter, each updated with atomics. */
	_Static_assert(sizeof(*st) % sizeof(uint64_t) == 0, "agent_stats: counters only");
	for (i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		to[i] = __atomic_load_n(&from[i], __ATOMIC_RELAXED);
}
