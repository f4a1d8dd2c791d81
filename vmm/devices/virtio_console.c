// SPDX-License-Identifier: MIT
/*
 * virtio-console devices on virtio-mmio (common/plugvm_virtio.h): slot 0 is the console,
 * slot 1 the agent channel. Each is a single-port console (no multiport): transmitq
 * bytes go to the backend's sink (stdout, or the agent's parser), receiveq gets bytes
 * from a bounded host-side ring (typed input, or agent requests) whenever the driver has
 * posted buffers. The transmitq is drained on the QueueNotify write itself, so a guest
 * printk costs one exit however long the line is; one notify takes at most one ring's
 * worth of chains, so a guest refilling its ring from another vCPU cannot keep the
 * device (and its lock) busy for ever.
 *
 * Locks: dev.lock (virtio_mmio.h) is taken by vCPU threads for every register access; the
 * main loop never waits for it. Host bytes go into the ring under rx_lock (held only to
 * copy), then whichever thread gets dev.lock next delivers them (rx_settle()).
 * Order: dev.lock, then rx_lock.
 */
#include <errno.h>
#include <linux/virtio_console.h>
#include <linux/virtio_ids.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "virtio_console.h"

#include "../console.h"
#include "../log.h"
#include "../vm.h"
#include "plugvm_abi.h"
#include "plugvm_virtio.h"
#include "virtio_mmio.h"

#define RX_RING (64u << 10)

struct vcon {
	struct vm *vm;
	struct virtio_mmio dev;
	unsigned slot;
	bool is_agent;
	pthread_mutex_t rx_lock;
	/* Guarded by rx_lock: */
	uint8_t *rx; /* host-to-guest bytes not yet delivered */
	size_t rx_head, rx_len;
	uint64_t rx_dropped;
	/* Host bytes wait for a thread holding dev.lock to deliver them (rx_settle()). */
	atomic_bool rx_kick;
	atomic_bool rx_live; /* the receiveq was live when last looked at */
	/* Guarded by dev.lock: */
	struct virtq_chain chain;
};

struct virtio_devices {
	struct vcon con[2];
	unsigned nr;
	struct virtio_agent_ops agent; /* set before vCPUs run */
};

static const struct virtio_console_config console_config; /* no size, ports or emerg_wr */

static void set_irq(void *opaque, int level)
{
	struct vcon *c = opaque;

	kvm_irq_line(&c->vm->kvm, PLUGVM_VIRTIO_GSI_BASE + c->slot, level);
}

/* Move pending host bytes into posted receive buffers. dev.lock held. */
static void deliver_rx(struct vcon *c)
{
	bool any = false;
	int r;

	atomic_store(&c->rx_live, virtio_mmio_queue_live(&c->dev, PLUGVM_VIRTIO_RXQ));
	pthread_mutex_lock(&c->rx_lock);
	while (c->rx_len && (r = virtq_pop(&c->dev, PLUGVM_VIRTIO_RXQ, true, &c->chain)) > 0) {
		uint32_t done = 0;
		unsigned i;

		for (i = 0; i < c->chain.nr && c->rx_len; i++) {
			struct virtq_seg *s = &c->chain.seg[i];
			uint32_t off = 0;

			while (off < s->len && c->rx_len) {
				size_t n = RX_RING - c->rx_head;

				if (n > c->rx_len)
					n = c->rx_len;
				if (n > s->len - off)
					n = s->len - off;
				memcpy(s->hva + off, c->rx + c->rx_head, n);
				c->rx_head = (c->rx_head + n) % RX_RING;
				c->rx_len -= n;
				off += (uint32_t)n;
			}
			done += off;
		}
		virtq_push(&c->dev, PLUGVM_VIRTIO_RXQ, c->chain.head, done);
		any = true;
	}
	pthread_mutex_unlock(&c->rx_lock);
	if (any)
		virtq_notify_used(&c->dev, PLUGVM_VIRTIO_RXQ);
}

/*
 * Deliver the host bytes that wait (rx_kick) if dev.lock is free; if it is not, its holder
 * does it after unlocking, since every holder calls this then. The flag is set before a
 * trylock and read after an unlock, both full barriers: one side always sees the other.
 * Any thread, dev.lock not held.
 */
static void rx_settle(struct vcon *c)
{
	while (atomic_load(&c->rx_kick) && !pthread_mutex_trylock(&c->dev.lock)) {
		atomic_store(&c->rx_kick, false);
		deliver_rx(c);
		pthread_mutex_unlock(&c->dev.lock);
	}
}

/*
 * Take the transmitq's chains, at most one ring's worth: the driver notifies after every
 * chain it adds (we never suppress notifications), so what is left has a notify coming.
 */
static void drain_tx(struct vcon *c)
{
	unsigned budget = c->dev.vq[PLUGVM_VIRTIO_TXQ].num;
	bool any = false;
	int r;

	while (budget-- && (r = virtq_pop(&c->dev, PLUGVM_VIRTIO_TXQ, false, &c->chain)) > 0) {
		unsigned i;

		for (i = 0; i < c->chain.nr; i++) {
			if (c->is_agent && c->vm->virtio->agent.rx)
				c->vm->virtio->agent.rx(c->vm->virtio->agent.opaque,
							c->chain.seg[i].hva, c->chain.seg[i].len);
			else if (!c->is_agent)
				console_write(c->vm->console, c->chain.seg[i].hva,
					      c->chain.seg[i].len);
		}
		virtq_push(&c->dev, PLUGVM_VIRTIO_TXQ, c->chain.head, 0);
		any = true;
	}
	if (any)
		virtq_notify_used(&c->dev, PLUGVM_VIRTIO_TXQ);
}

static void vcon_notify(struct virtio_mmio *d, unsigned q)
{
	struct vcon *c = d->backend;

	if (q == PLUGVM_VIRTIO_TXQ)
		drain_tx(c);
	else
		deliver_rx(c);
}

static void vcon_reset(struct virtio_mmio *d)
{
	struct vcon *c = d->backend;

	/* Agent requests belong to the session that ended; typed input survives a reset. */
	atomic_store(&c->rx_live, false);
	if (c->is_agent) {
		pthread_mutex_lock(&c->rx_lock);
		c->rx_head = c->rx_len = 0;
		pthread_mutex_unlock(&c->rx_lock);
		if (c->vm->virtio->agent.reset)
			c->vm->virtio->agent.reset(c->vm->virtio->agent.opaque);
	}
}

static const struct virtio_mmio_ops vcon_ops = {
	.device_id = VIRTIO_ID_CONSOLE,
	.features = 0,
	.nr_queues = 2,
	.config = &console_config,
	.config_len = sizeof(console_config),
	.notify = vcon_notify,
	.reset = vcon_reset,
};

static void vcon_mmio(void *opaque, int vcpu_id, uint64_t offset, uint8_t *data, unsigned size,
		      unsigned count, bool is_write)
{
	struct vcon *c = opaque;

	(void)vcpu_id;
	(void)count; /* MMIO exits are single accesses */
	virtio_mmio_access(&c->dev, offset, data, size, is_write);
	rx_settle(c); /* host bytes that came while this vCPU held the device */
}

int virtio_devices_init(struct vm *vm)
{
	static const char *const names[2] = { "virtio-console", "virtio-agent" };
	struct virtio_devices *vd;
	unsigned i;

	if (vm->cfg->virtio_disabled)
		return 0;
	vd = calloc(1, sizeof(*vd));
	if (!vd) {
		log_error("out of memory");
		return -ENOMEM;
	}
	vm->virtio = vd;
	for (i = 0; i < 2; i++) {
		struct vcon *c = &vd->con[i];

		c->vm = vm;
		c->slot = i;
		c->is_agent = i == PLUGVM_VIRTIO_SLOT_AGENT;
		c->rx = malloc(RX_RING);
		if (!c->rx) {
			log_error("out of memory");
			return -ENOMEM;
		}
		pthread_mutex_init(&c->rx_lock, NULL);
		virtio_mmio_init(&c->dev, names[i], &vcon_ops, c, &vm->mem, set_irq, c);
		vd->nr++;
		if (bus_register(&vm->mmio,
				 PLUGVM_VIRTIO_MMIO_BASE + (uint64_t)i * PLUGVM_VIRTIO_MMIO_STRIDE,
				 PLUGVM_VIRTIO_MMIO_SIZE, vcon_mmio, c, names[i]))
			return -EEXIST;
	}
	return 0;
}

void virtio_devices_reset(struct vm *vm)
{
	unsigned i;

	for (i = 0; vm->virtio && i < vm->virtio->nr; i++)
		virtio_mmio_reset(&vm->virtio->con[i].dev);
}

void virtio_devices_exit(struct vm *vm)
{
	struct virtio_devices *vd = vm->virtio;
	unsigned i;

	if (!vd)
		return;
	for (i = 0; i < vd->nr; i++) {
		virtio_mmio_destroy(&vd->con[i].dev);
		pthread_mutex_destroy(&vd->con[i].rx_lock);
		free(vd->con[i].rx);
	}
	free(vd);
	vm->virtio = NULL;
}

int virtio_devices_cmdline(const struct vm *vm, char *buf, size_t len)
{
	const struct virtio_devices *vd = vm->virtio;
	size_t used = 0;
	unsigned i;

	if (len)
		buf[0] = 0;
	for (i = 0; vd && i < vd->nr; i++) {
		int n = snprintf(buf + used, len - used, " virtio_mmio.device=4K@%#x:%u",
				 PLUGVM_VIRTIO_MMIO_BASE + i * PLUGVM_VIRTIO_MMIO_STRIDE,
				 PLUGVM_VIRTIO_GSI_BASE + i);

		if (n < 0 || (size_t)n >= len - used)
			return -ENOSPC;
		used += (size_t)n;
	}
	return 0;
}

/*
 * Queue bytes for slot `slot`'s receiveq; all or nothing when `whole`. Never waits for
 * dev.lock, which a vCPU holds while it works through the guest's rings.
 */
static size_t push(struct vm *vm, unsigned slot, const uint8_t *buf, size_t len, bool whole)
{
	struct virtio_devices *vd = vm->virtio;
	struct vcon *c;
	size_t n, i;

	if (!vd || slot >= vd->nr)
		return 0;
	c = &vd->con[slot];
	pthread_mutex_lock(&c->rx_lock);
	n = RX_RING - c->rx_len;
	if (n > len)
		n = len;
	if (whole && n < len)
		n = 0;
	for (i = 0; i < n; i++)
		c->rx[(c->rx_head + c->rx_len + i) % RX_RING] = buf[i];
	c->rx_len += n;
	c->rx_dropped += len - n;
	pthread_mutex_unlock(&c->rx_lock);
	if (n) {
		atomic_store(&c->rx_kick, true);
		rx_settle(c);
	}
	return n;
}

bool virtio_console_live(struct vm *vm)
{
	struct virtio_devices *vd = vm->virtio;
	struct vcon *c;

	if (!vd)
		return false;
	c = &vd->con[0];
	/* Busy device: what it was when last looked at (it changes only at driver setup). */
	if (pthread_mutex_trylock(&c->dev.lock))
		return atomic_load(&c->rx_live);
	atomic_store(&c->rx_live, virtio_mmio_queue_live(&c->dev, PLUGVM_VIRTIO_RXQ));
	pthread_mutex_unlock(&c->dev.lock);
	rx_settle(c);
	return atomic_load(&c->rx_live);
}

size_t virtio_console_rx(struct vm *vm, const uint8_t *buf, size_t len)
{
	return push(vm, PLUGVM_VIRTIO_SLOT_CONSOLE, buf, len, false);
}

void virtio_agent_set_ops(struct vm *vm, const struct virtio_agent_ops *ops)
{
	if (vm->virtio)
		vm->virtio->agent = *ops;
}

int virtio_agent_send(struct vm *vm, const void *msg, size_t len)
{
	if (!vm->virtio)
		return -ENODEV;
	return push(vm, PLUGVM_VIRTIO_SLOT_AGENT, msg, len, true) == len ? 0 : -EAGAIN;
}
