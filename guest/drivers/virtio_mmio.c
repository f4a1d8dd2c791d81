// SPDX-License-Identifier: MIT
/*
 * virtio-mmio transport and split virtqueues (see virtio_mmio.h). Every buffer is one
 * descriptor (no chains, no indirect descriptors, no event index): the console and the
 * agent channel need nothing more, and the device offers nothing more.
 */
#include "drivers/virtio_mmio.h"

#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>

#include "arch.h"
#include "kernel/cmdline.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/mm.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/string.h"
#include "plugvm_abi.h"
#include "plugvm_virtio.h"

CMDLINE_PARAM(device, .name = "virtio_mmio.device", .kind = CMDLINE_STRING, .repeat = true);

#define VIRTIO_MMIO_MAGIC ('v' | 'i' << 8 | 'r' << 16 | (uint32_t)'t' << 24)
/* IOAPIC pins the guest routes (the IOAPIC has 24), each to VEC_IRQ_BASE + pin. */
#define VIRTIO_MAX_GSI 23

static struct virtio_dev devs[PLUGVM_VIRTIO_MAX_DEVICES];
static unsigned nr_devs;

static uint32_t rd(const struct virtio_dev *d, unsigned off)
{
	return *(volatile uint32_t *)(uintptr_t)(d->base + off);
}

static void wr(const struct virtio_dev *d, unsigned off, uint32_t v)
{
	*(volatile uint32_t *)(uintptr_t)(d->base + off) = v;
}

/* A window the identity map covers uncached (the top GiB below 4 GiB, see entry.S). */
static bool window_ok(uint64_t base, uint64_t size)
{
	return size >= 0x100 && !(base & 3) && base >= 0xc0000000ull &&
	       base + size <= 0x100000000ull;
}

static void add_device(uint64_t base, uint64_t size, unsigned gsi)
{
	struct virtio_dev *d;
	unsigned slot = nr_devs;

	if (nr_devs >= PLUGVM_VIRTIO_MAX_DEVICES) {
		pr_warn("virtio: more than %u devices: %#lx ignored\n", PLUGVM_VIRTIO_MAX_DEVICES,
			(unsigned long)base);
		return;
	}
	d = &devs[nr_devs++];
	memset(d, 0, sizeof(*d));
	d->slot = slot;
	d->base = base;
	d->size = size;
	d->gsi = gsi;
	if (!window_ok(base, size) || gsi > VIRTIO_MAX_GSI) {
		pr_warn("virtio: device %u at %#lx (size %#lx, GSI %u) is out of reach: ignored\n",
			slot, (unsigned long)base, (unsigned long)size, gsi);
		return;
	}
	if (rd(d, VIRTIO_MMIO_MAGIC_VALUE) != VIRTIO_MMIO_MAGIC ||
	    rd(d, VIRTIO_MMIO_VERSION) != 2) {
		pr_warn("virtio: device %u at %#lx: no virtio-mmio version 2 device\n", slot,
			(unsigned long)base);
		return;
	}
	d->device_id = rd(d, VIRTIO_MMIO_DEVICE_ID);
	pr_debug("virtio: device %u: id %u at %#lx, GSI %u\n", slot, d->device_id,
		 (unsigned long)base, gsi);
}

unsigned virtio_mmio_probe(void)
{
	const char *cur = NULL, *v;
	unsigned i, usable = 0;
	size_t len;

	while (cmdline_next_value("virtio_mmio.device", &cur, &v, &len)) {
		uint64_t size, base;
		unsigned gsi;

		if (!cmdline_parse_mmio_device(v, len, &size, &base, &gsi)) {
			pr_warn("virtio: virtio_mmio.device=%.*s: not <size>@<base>:<gsi>\n",
				(int)len, v);
			continue;
		}
		add_device(base, size, gsi);
	}
	/* Announced by the CPUID leaf only: plugvm's fixed slots (plugvm_virtio.h). */
	if (!nr_devs && arch_plugvm_feature(PLUGVM_FEATURE_VIRTIO))
		for (i = 0; i < 2; i++)
			add_device(PLUGVM_VIRTIO_MMIO_BASE + i * PLUGVM_VIRTIO_MMIO_STRIDE,
				   PLUGVM_VIRTIO_MMIO_SIZE, PLUGVM_VIRTIO_GSI_BASE + i);
	for (i = 0; i < nr_devs; i++)
		usable += devs[i].device_id != 0;
	return usable;
}

struct virtio_dev *virtio_mmio_dev(unsigned slot, uint32_t device_id)
{
	if (slot >= nr_devs || !devs[slot].device_id || devs[slot].device_id != device_id)
		return NULL;
	return &devs[slot];
}

uint32_t virtio_dev_status(struct virtio_dev *d)
{
	return rd(d, VIRTIO_MMIO_STATUS);
}

bool virtio_dev_needs_reset(struct virtio_dev *d)
{
	return rd(d, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET;
}

uint64_t virtio_dev_features(struct virtio_dev *d)
{
	uint64_t f;

	wr(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	f = (uint64_t)rd(d, VIRTIO_MMIO_DEVICE_FEATURES) << 32;
	wr(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	return f | rd(d, VIRTIO_MMIO_DEVICE_FEATURES);
}

void virtio_dev_reset(struct virtio_dev *d)
{
	unsigned spins = 0;

	wr(d, VIRTIO_MMIO_STATUS, 0);
	/* The reset is done when status reads back 0 (4.2.3.1.1); bounded for broken ones. */
	while (rd(d, VIRTIO_MMIO_STATUS) && ++spins < 1000)
		arch_cpu_relax();
}

int virtio_dev_negotiate(struct virtio_dev *d, uint64_t features)
{
	uint32_t st = VIRTIO_CONFIG_S_ACKNOWLEDGE;

	virtio_dev_reset(d);
	wr(d, VIRTIO_MMIO_STATUS, st);
	st |= VIRTIO_CONFIG_S_DRIVER;
	wr(d, VIRTIO_MMIO_STATUS, st);
	wr(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	wr(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)features);
	wr(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	wr(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(features >> 32));
	st |= VIRTIO_CONFIG_S_FEATURES_OK;
	wr(d, VIRTIO_MMIO_STATUS, st);
	/* A device that refuses the set leaves FEATURES_OK clear (3.1.1 step 6). */
	if (!(rd(d, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK)) {
		wr(d, VIRTIO_MMIO_STATUS, rd(d, VIRTIO_MMIO_STATUS) | VIRTIO_CONFIG_S_FAILED);
		return -EIO;
	}
	return 0;
}

/* Empty rings; every descriptor on the free list. */
static void virtq_clear(struct virtq *vq)
{
	uint16_t i;

	memset(vq->desc, 0, PAGE_SIZE);
	for (i = 0; i < vq->num; i++)
		vq->desc[i].next = (uint16_t)(i + 1);
	vq->free_head = 0;
	vq->nr_free = vq->num;
	vq->avail_idx = 0;
	vq->last_used = 0;
}

static int setup_queue(struct virtio_dev *d, unsigned q)
{
	struct virtq *vq = &d->vq[q];
	uint32_t max;
	uint16_t num = VIRTIO_QUEUE_SIZE;
	uint64_t pa;

	wr(d, VIRTIO_MMIO_QUEUE_SEL, q);
	if (rd(d, VIRTIO_MMIO_QUEUE_READY))
		return -EIO;
	max = rd(d, VIRTIO_MMIO_QUEUE_NUM_MAX);
	if (!max)
		return -EIO;
	while (num > max)
		num >>= 1;
	if (!vq->desc) {
		/* One page: desc (16 * num) at 0, avail at 1 KiB, used at 2 KiB (num <= 64). */
		uint8_t *page = page_zalloc(1);

		_Static_assert(VIRTIO_QUEUE_SIZE <= 64, "rings of one page");
		if (!page)
			return -EIO;
		vq->desc = (struct vring_desc *)page;
		vq->avail = (struct vring_avail *)(page + 1024);
		vq->used = (struct vring_used *)(page + 2048);
	}
	vq->num = num;
	virtq_clear(vq);
	wr(d, VIRTIO_MMIO_QUEUE_NUM, num);
	/* Identity-mapped kernel memory: the address is the guest physical one. */
	pa = (uint64_t)(uintptr_t)vq->desc;
	wr(d, VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)pa);
	wr(d, VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(pa >> 32));
	pa = (uint64_t)(uintptr_t)vq->avail;
	wr(d, VIRTIO_MMIO_QUEUE_AVAIL_LOW, (uint32_t)pa);
	wr(d, VIRTIO_MMIO_QUEUE_AVAIL_HIGH, (uint32_t)(pa >> 32));
	pa = (uint64_t)(uintptr_t)vq->used;
	wr(d, VIRTIO_MMIO_QUEUE_USED_LOW, (uint32_t)pa);
	wr(d, VIRTIO_MMIO_QUEUE_USED_HIGH, (uint32_t)(pa >> 32));
	wr(d, VIRTIO_MMIO_QUEUE_READY, 1);
	return rd(d, VIRTIO_MMIO_QUEUE_READY) ? 0 : -EIO;
}

int virtio_dev_init(struct virtio_dev *d, unsigned nr_queues)
{
	uint64_t version_1 = 1ull << VIRTIO_F_VERSION_1;
	unsigned q;

	if (nr_queues > VIRTIO_MAX_QUEUES)
		return -EIO;
	if (!(virtio_dev_features(d) & version_1)) {
		virtio_dev_reset(d);
		wr(d, VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_FAILED);
		pr_warn("virtio: device %u does not offer VIRTIO_F_VERSION_1\n", d->slot);
		return -EIO;
	}
	if (virtio_dev_negotiate(d, version_1)) {
		pr_warn("virtio: device %u refused features %#lx\n", d->slot,
			(unsigned long)version_1);
		return -EIO;
	}
	d->nr_queues = nr_queues;
	for (q = 0; q < nr_queues; q++) {
		if (setup_queue(d, q)) {
			wr(d, VIRTIO_MMIO_STATUS,
			   rd(d, VIRTIO_MMIO_STATUS) | VIRTIO_CONFIG_S_FAILED);
			pr_warn("virtio: device %u: cannot set up queue %u\n", d->slot, q);
			return -EIO;
		}
	}
	wr(d, VIRTIO_MMIO_STATUS, rd(d, VIRTIO_MMIO_STATUS) | VIRTIO_CONFIG_S_DRIVER_OK);
	if ((rd(d, VIRTIO_MMIO_STATUS) &
	     (VIRTIO_CONFIG_S_DRIVER_OK | VIRTIO_CONFIG_S_NEEDS_RESET)) !=
	    VIRTIO_CONFIG_S_DRIVER_OK) {
		pr_warn("virtio: device %u did not accept DRIVER_OK (status %#x)\n", d->slot,
			rd(d, VIRTIO_MMIO_STATUS));
		return -EIO;
	}
	return 0;
}

static void virtio_irq(unsigned vector, void *arg)
{
	struct virtio_dev *d = arg;
	uint32_t isr;

	(void)vector;
	/* Level-triggered: the line stays up until this acknowledgement clears the bits. */
	isr = rd(d, VIRTIO_MMIO_INTERRUPT_STATUS);
	if (isr)
		wr(d, VIRTIO_MMIO_INTERRUPT_ACK, isr);
	d->nr_irqs++;
	if (isr & VIRTIO_MMIO_INT_CONFIG)
		d->nr_config_irqs++;
	if (isr && d->irq_fn)
		d->irq_fn(d, isr, d->irq_arg);
}

void virtio_dev_set_irq(struct virtio_dev *d, virtio_irq_fn fn, void *arg)
{
	d->irq_fn = fn;
	d->irq_arg = arg;
	arch_request_irq(d->gsi, true, false, virtio_irq, d); /* gsi checked by add_device() */
}

/* ---- split virtqueues ----------------------------------------------------------------- */

int virtq_add(struct virtq *vq, const void *buf, uint32_t len, bool device_writes)
{
	uint16_t id;

	if (!vq->nr_free)
		return -1;
	id = vq->free_head;
	vq->free_head = vq->desc[id].next;
	vq->nr_free--;
	vq->desc[id].addr = (uint64_t)(uintptr_t)buf;
	vq->desc[id].len = len;
	vq->desc[id].flags = device_writes ? VRING_DESC_F_WRITE : 0;
	vq->desc[id].next = 0;
	vq->avail->ring[vq->avail_idx & (vq->num - 1)] = id;
	vq->avail_idx++;
	return id;
}

void virtq_kick(struct virtio_dev *d, unsigned q)
{
	struct virtq *vq = &d->vq[q];

	/* The descriptors and ring entries before the index that publishes them (2.7.13). */
	__atomic_store_n(&vq->avail->idx, vq->avail_idx, __ATOMIC_RELEASE);
	/* ... and the index before the notification the device acts on (a full barrier). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	wr(d, VIRTIO_MMIO_QUEUE_NOTIFY, q);
}

int virtq_get_used(struct virtq *vq, uint32_t *len)
{
	struct vring_used_elem e;
	uint16_t idx = __atomic_load_n(&vq->used->idx, __ATOMIC_ACQUIRE);

	/* The acquire load orders the element reads after the index (2.7.14). */
	while (idx != vq->last_used) {
		e = vq->used->ring[vq->last_used & (vq->num - 1)];
		vq->last_used++;
		/* Hostile or confused device: an id we never posted is skipped. */
		if (e.id >= vq->num || vq->nr_free >= vq->num)
			continue;
		vq->desc[e.id].next = vq->free_head;
		vq->free_head = (uint16_t)e.id;
		vq->nr_free++;
		if (len)
			*len = e.len;
		return (int)e.id;
	}
	return -1;
}

void virtq_no_interrupt(struct virtq *vq, bool off)
{
	__atomic_store_n(&vq->avail->flags, off ? VRING_AVAIL_F_NO_INTERRUPT : 0, __ATOMIC_RELEASE);
}

void virtq_publish_raw(struct virtq *vq, uint16_t head)
{
	vq->avail->ring[vq->avail_idx & (vq->num - 1)] = head;
	vq->avail_idx++;
}

void virtq_publish_idx_ahead(struct virtio_dev *d, unsigned q, uint16_t ahead)
{
	struct virtq *vq = &d->vq[q];

	__atomic_store_n(&vq->avail->idx, (uint16_t)(vq->avail_idx + ahead), __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	wr(d, VIRTIO_MMIO_QUEUE_NOTIFY, q);
}

/* ---- transmit pool ---------------------------------------------------------------------- */

int virtio_tx_init(struct virtio_tx *tx, const char *name, struct virtio_dev *d, unsigned q,
		   unsigned nr_bufs, unsigned buf_size)
{
	size_t pages = DIV_ROUND_UP((size_t)nr_bufs * buf_size, PAGE_SIZE);

	if (nr_bufs > VIRTIO_TX_MAX_BUFS || nr_bufs > VIRTIO_QUEUE_SIZE || !buf_size)
		return -EINVAL;
	tx->pool = page_alloc(pages);
	if (!tx->pool)
		return -ENOMEM;
	tx->dev = d;
	tx->q = q;
	tx->nr_bufs = nr_bufs;
	tx->buf_size = buf_size;
	tx->owner = -1;
	tx->paused = true;
	tx->nr_free = 0;
	spin_lock_init(&tx->lock, name);
	return 0;
}

void virtio_tx_pause(struct virtio_tx *tx, bool pause)
{
	unsigned long flags = spin_lock_irqsave(&tx->lock);
	unsigned i;

	tx->paused = pause;
	if (!pause) {
		/* The queue was set up afresh: nothing is in flight. */
		for (i = 0; i < tx->nr_bufs; i++)
			tx->free[i] = (uint8_t)i;
		tx->nr_free = tx->nr_bufs;
		/* One string instruction: on kvm_pvm each guest instruction is emulated. */
		memset(tx->buf_of, -1, sizeof(tx->buf_of));
	}
	spin_unlock_irqrestore(&tx->lock, flags);
}

/* Give back every buffer the device is done with. tx->lock held. */
static void tx_reclaim(struct virtio_tx *tx)
{
	struct virtq *vq = &tx->dev->vq[tx->q];
	int id;

	while ((id = virtq_get_used(vq, NULL)) >= 0) {
		if (id >= VIRTIO_QUEUE_SIZE || tx->buf_of[id] < 0)
			continue;
		tx->free[tx->nr_free++] = (uint8_t)tx->buf_of[id];
		tx->buf_of[id] = -1;
	}
}

/* A free buffer, waiting at most wait_ns; -5 if the device wants a reset, -110. */
static int tx_get_buf(struct virtio_tx *tx, uint64_t wait_ns)
{
	uint64_t deadline = 0;

	tx_reclaim(tx);
	if (tx->nr_free)
		return tx->free[--tx->nr_free];
	tx->waits++;
	/* Nothing came back: a device that failed stops consuming; ask it once. */
	if (virtio_dev_needs_reset(tx->dev))
		return -EIO;
	deadline = arch_now_ns() + wait_ns;
	do {
		arch_cpu_relax();
		tx_reclaim(tx);
		if (tx->nr_free)
			return tx->free[--tx->nr_free];
	} while (arch_now_ns() < deadline);
	tx->timeouts++;
	return virtio_dev_needs_reset(tx->dev) ? -EIO : -ETIMEDOUT;
}

int virtio_tx_send(struct virtio_tx *tx, const void *p, size_t n, uint64_t wait_ns)
{
	const uint8_t *src = p;
	unsigned long flags;
	int me, ret = 0;

	flags = arch_irq_save();
	me = (int)smp_processor_id();
	if (__atomic_load_n(&tx->owner, __ATOMIC_RELAXED) == me) {
		arch_irq_restore(flags);
		return -EDEADLK;
	}
	arch_irq_restore(flags);
	flags = spin_lock_irqsave(&tx->lock);
	if (tx->paused) {
		tx->refused++;
		spin_unlock_irqrestore(&tx->lock, flags);
		return -EAGAIN;
	}
	/* Now, under the lock: `me` above may be a CPU we have since left. */
	__atomic_store_n(&tx->owner, (int)smp_processor_id(), __ATOMIC_RELAXED);
	while (n) {
		size_t chunk = n < tx->buf_size ? n : tx->buf_size;
		int b = tx_get_buf(tx, wait_ns), id;
		uint8_t *buf;

		if (b < 0) {
			ret = b;
			break;
		}
		buf = tx->pool + (size_t)b * tx->buf_size;
		memcpy(buf, src, chunk);
		id = virtq_add(&tx->dev->vq[tx->q], buf, (uint32_t)chunk, false);
		if (id < 0) {
			/* Cannot happen: a free buffer means a free descriptor. */
			tx->free[tx->nr_free++] = (uint8_t)b;
			ret = -ETIMEDOUT;
			break;
		}
		tx->buf_of[id] = (int8_t)b;
		virtq_kick(tx->dev, tx->q);
		tx->kicks++;
		tx->bytes += chunk;
		src += chunk;
		n -= chunk;
	}
	__atomic_store_n(&tx->owner, -1, __ATOMIC_RELAXED);
	spin_unlock_irqrestore(&tx->lock, flags);
	return ret;
}

/* ---- receive buffer pools ------------------------------------------------------------- */

int virtio_rx_init(struct virtio_rx *rx, struct virtio_dev *d, unsigned q, unsigned nbufs,
		   unsigned buf_size)
{
	if (nbufs * buf_size > PAGE_SIZE || nbufs > 127)
		return -EINVAL;
	rx->dev = d;
	rx->q = q;
	rx->nbufs = nbufs;
	rx->buf_size = buf_size;
	memset(rx->buf_of, -1, sizeof(rx->buf_of));
	rx->pool = page_zalloc(1);
	return rx->pool ? 0 : -ENOMEM;
}

void virtio_rx_fill(struct virtio_rx *rx, bool all)
{
	struct virtq *vq = &rx->dev->vq[rx->q];
	bool posted[128] = { false };
	unsigned i;
	int id;

	if (all)
		memset(rx->buf_of, -1, sizeof(rx->buf_of));
	for (i = 0; i < VIRTIO_QUEUE_SIZE; i++)
		if (rx->buf_of[i] >= 0)
			posted[rx->buf_of[i]] = true;
	for (i = 0; i < rx->nbufs; i++) {
		if (posted[i])
			continue;
		id = virtq_add(vq, rx->pool + i * rx->buf_size, rx->buf_size, true);
		if (id < 0)
			break;
		rx->buf_of[id] = (int8_t)i;
	}
	virtq_kick(rx->dev, rx->q);
}

const uint8_t *virtio_rx_get(struct virtio_rx *rx, uint32_t *len)
{
	struct virtq *vq = &rx->dev->vq[rx->q];
	int id, b;

	/* A used id we did not post (a confused device) is skipped. */
	while ((id = virtq_get_used(vq, len)) >= 0) {
		b = id < VIRTIO_QUEUE_SIZE ? rx->buf_of[id] : -1;
		if (b < 0)
			continue;
		rx->buf_of[id] = -1;
		if (*len > rx->buf_size)
			*len = rx->buf_size;
		return rx->pool + (unsigned)b * rx->buf_size;
	}
	return NULL;
}

/* ---- the owner thread's wake-ups ----------------------------------------------------- */

void virtio_wait_irq(struct virtio_dev *d, uint32_t isr, void *arg)
{
	struct virtio_wait *w = arg;

	if (isr & VIRTIO_MMIO_INT_VRING)
		__atomic_store_n(&w->rx_pending, 1, __ATOMIC_RELEASE);
	if ((isr & VIRTIO_MMIO_INT_CONFIG) && virtio_dev_needs_reset(d))
		__atomic_store_n(&w->reset_pending, 1, __ATOMIC_RELEASE);
	if (READ_ONCE(w->thread))
		thread_wake(w->thread);
}

void virtio_wait_request_reset(struct virtio_wait *w)
{
	__atomic_store_n(&w->reset_pending, 1, __ATOMIC_RELEASE);
	if (READ_ONCE(w->thread))
		thread_wake(w->thread);
}

bool virtio_wait_next(struct virtio_wait *w, struct virtio_dev *d)
{
	thread_wait_until(__atomic_exchange_n(&w->rx_pending, 0, __ATOMIC_ACQ_REL) ||
			  __atomic_load_n(&w->reset_pending, __ATOMIC_ACQUIRE));
	return __atomic_exchange_n(&w->reset_pending, 0, __ATOMIC_ACQ_REL) &&
	       virtio_dev_needs_reset(d);
}

int virtio_dev_start(struct virtio_dev *d, struct virtio_tx *tx)
{
	int err;

	virtio_tx_pause(tx, true);
	err = virtio_dev_init(d, 2);
	if (err)
		return err;
	virtq_no_interrupt(&d->vq[PLUGVM_VIRTIO_TXQ], true);
	virtio_tx_pause(tx, false);
	return 0;
}
