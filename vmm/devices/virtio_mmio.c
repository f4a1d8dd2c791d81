// SPDX-License-Identifier: MIT
/*
 * virtio-mmio, version 2, with split virtqueues (virtio 1.x, sections 2.7 and 4.2).
 *
 * What the guest controls is checked where it is used: register writes against the
 * device status (queue registers only while the queue is not ready), ring addresses and
 * alignment when a queue is made ready, and every descriptor when a chain is taken: index
 * in range, no INDIRECT (not offered), the direction the queue needs, a non-empty buffer
 * inside guest RAM, at most `num` descriptors per chain (which also ends loops). Each
 * descriptor is copied out of guest memory once before it is checked, so a guest that
 * rewrites its ring meanwhile changes nothing the device relies on.
 */
#include "virtio_mmio.h"

#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_ring.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MMIO_VERSION	2u
#define VENDOR_ID	0x4d564750u /* "PGVM" */
#define MAX_CHAIN_BYTES (1u << 20)

static uint64_t offered(const struct virtio_mmio *d)
{
	return (1ull << VIRTIO_F_VERSION_1) | d->ops->features;
}

static void update_irq(struct virtio_mmio *d)
{
	int level = d->isr != 0;

	if (level != d->irq_level) {
		d->irq_level = level;
		d->set_irq(d->irq_opaque, level);
	}
}

void virtio_mmio_init(struct virtio_mmio *d, const char *name, const struct virtio_mmio_ops *ops,
		      void *backend, const struct guest_mem *mem,
		      void (*set_irq)(void *irq_opaque, int level), void *irq_opaque)
{
	memset(d, 0, sizeof(*d));
	d->name = name;
	d->ops = ops;
	d->backend = backend;
	d->mem = mem;
	d->set_irq = set_irq;
	d->irq_opaque = irq_opaque;
	pthread_mutex_init(&d->lock, NULL);
}

void virtio_mmio_destroy(struct virtio_mmio *d)
{
	pthread_mutex_destroy(&d->lock);
}

/* Status 0 (or a failure the driver must reset): forget the driver's configuration. */
static void device_reset(struct virtio_mmio *d)
{
	d->status = 0;
	d->dev_features_sel = d->drv_features_sel = d->queue_sel = 0;
	d->driver_features = 0;
	d->failed = false;
	memset(d->vq, 0, sizeof(d->vq));
	d->isr = 0;
	update_irq(d);
	if (d->ops->reset)
		d->ops->reset(d);
}

void virtio_mmio_reset(struct virtio_mmio *d)
{
	pthread_mutex_lock(&d->lock);
	device_reset(d);
	pthread_mutex_unlock(&d->lock);
}

void virtio_mmio_fail(struct virtio_mmio *d, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	d->bad_rings++;
	if (!d->failed)
		log_guest_warn(&d->warn_rl, "%s: %s: device needs a reset", d->name, msg);
	d->failed = true;
	d->status |= VIRTIO_CONFIG_S_NEEDS_RESET;
	if (d->status & VIRTIO_CONFIG_S_DRIVER_OK) {
		d->isr |= VIRTIO_MMIO_INT_CONFIG;
		update_irq(d);
	}
	if (d->ops->reset)
		d->ops->reset(d);
}

bool virtio_mmio_queue_live(const struct virtio_mmio *d, unsigned q)
{
	return q < d->ops->nr_queues && !d->failed && (d->status & VIRTIO_CONFIG_S_DRIVER_OK) &&
	       d->vq[q].ready;
}

/* The rings of `vq` lie in RAM with their alignment (virtio 1.x, 2.7.2). */
static bool rings_ok(const struct virtio_mmio *d, const struct virtq *vq)
{
	uint64_t n = vq->num;

	return !(vq->desc & 15) && !(vq->avail & 1) && !(vq->used & 3) &&
	       mem_gpa_ptr(d->mem, vq->desc, n * sizeof(struct vring_desc)) &&
	       mem_gpa_ptr(d->mem, vq->avail, 6 + 2 * n) &&
	       mem_gpa_ptr(d->mem, vq->used, 6 + 8 * n);
}

static void set_queue_ready(struct virtio_mmio *d, struct virtq *vq, uint32_t v)
{
	if (!v) {
		vq->ready = false;
		return;
	}
	if (!vq->num || (vq->num & (vq->num - 1)) || vq->num > PLUGVM_VIRTIO_QUEUE_MAX) {
		virtio_mmio_fail(d, "queue %u: size %u is not a power of two up to %u",
				 d->queue_sel, vq->num, PLUGVM_VIRTIO_QUEUE_MAX);
		return;
	}
	if (!rings_ok(d, vq)) {
		virtio_mmio_fail(d,
				 "queue %u: rings (desc %#llx avail %#llx used %#llx) outside "
				 "RAM or misaligned",
				 d->queue_sel, (unsigned long long)vq->desc,
				 (unsigned long long)vq->avail, (unsigned long long)vq->used);
		return;
	}
	vq->last_avail = vq->used_idx = 0;
	vq->ready = true;
}

static void write_status(struct virtio_mmio *d, uint32_t v)
{
	if (v == 0) {
		device_reset(d);
		return;
	}
	v &= 0xff;
	/* The driver may only add bits (2.1.1); NEEDS_RESET is the device's to set. */
	if ((d->status & ~v & ~VIRTIO_CONFIG_S_NEEDS_RESET) || (v & VIRTIO_CONFIG_S_NEEDS_RESET)) {
		log_guest_warn(&d->warn_rl, "%s: status %#x -> %#x clears bits: ignored", d->name,
			       d->status, v);
		return;
	}
	if ((v & VIRTIO_CONFIG_S_FEATURES_OK) && !(d->status & VIRTIO_CONFIG_S_FEATURES_OK)) {
		uint64_t f = d->driver_features;

		/* Refused: FEATURES_OK stays clear, which is how the driver learns it (3.1.1). */
		if ((f & ~offered(d)) || !(f & (1ull << VIRTIO_F_VERSION_1))) {
			log_debug("%s: driver features %#llx refused (offered %#llx)", d->name,
				  (unsigned long long)f, (unsigned long long)offered(d));
			v &= ~(uint32_t)VIRTIO_CONFIG_S_FEATURES_OK;
		}
	}
	if ((v & VIRTIO_CONFIG_S_DRIVER_OK) && !(v & VIRTIO_CONFIG_S_FEATURES_OK)) {
		log_guest_warn(&d->warn_rl, "%s: DRIVER_OK without FEATURES_OK: ignored", d->name);
		v &= ~(uint32_t)VIRTIO_CONFIG_S_DRIVER_OK;
	}
	d->status = v | (d->status & VIRTIO_CONFIG_S_NEEDS_RESET);
}

static uint32_t read_reg(struct virtio_mmio *d, uint64_t off)
{
	struct virtq *vq = d->queue_sel < d->ops->nr_queues ? &d->vq[d->queue_sel] : NULL;

	switch (off) {
	case VIRTIO_MMIO_MAGIC_VALUE:
		return ('v' | 'i' << 8 | 'r' << 16 | (uint32_t)'t' << 24);
	case VIRTIO_MMIO_VERSION:
		return MMIO_VERSION;
	case VIRTIO_MMIO_DEVICE_ID:
		return d->ops->device_id;
	case VIRTIO_MMIO_VENDOR_ID:
		return VENDOR_ID;
	case VIRTIO_MMIO_DEVICE_FEATURES:
		if (d->dev_features_sel > 1)
			return 0;
		return (uint32_t)(offered(d) >> (32 * d->dev_features_sel));
	case VIRTIO_MMIO_QUEUE_NUM_MAX:
		return vq ? PLUGVM_VIRTIO_QUEUE_MAX : 0;
	case VIRTIO_MMIO_QUEUE_READY:
		return vq ? vq->ready : 0;
	case VIRTIO_MMIO_INTERRUPT_STATUS:
		return d->isr;
	case VIRTIO_MMIO_STATUS:
		return d->status;
	case VIRTIO_MMIO_CONFIG_GENERATION:
		return 0;
	default:
		return 0; /* write-only or reserved */
	}
}

static void write_queue_reg(struct virtio_mmio *d, uint64_t off, uint32_t v)
{
	struct virtq *vq;

	if (d->queue_sel >= d->ops->nr_queues) {
		log_guest_warn(&d->warn_rl, "%s: queue %u does not exist", d->name, d->queue_sel);
		return;
	}
	vq = &d->vq[d->queue_sel];
	if (off == VIRTIO_MMIO_QUEUE_READY) {
		set_queue_ready(d, vq, v);
		return;
	}
	if (vq->ready) {
		log_guest_warn(&d->warn_rl, "%s: queue %u reconfigured while ready: ignored",
			       d->name, d->queue_sel);
		return;
	}
	switch (off) {
	case VIRTIO_MMIO_QUEUE_NUM:
		vq->num = v;
		break;
	case VIRTIO_MMIO_QUEUE_DESC_LOW:
		vq->desc = (vq->desc & ~0xffffffffull) | v;
		break;
	case VIRTIO_MMIO_QUEUE_DESC_HIGH:
		vq->desc = (vq->desc & 0xffffffffull) | (uint64_t)v << 32;
		break;
	case VIRTIO_MMIO_QUEUE_AVAIL_LOW:
		vq->avail = (vq->avail & ~0xffffffffull) | v;
		break;
	case VIRTIO_MMIO_QUEUE_AVAIL_HIGH:
		vq->avail = (vq->avail & 0xffffffffull) | (uint64_t)v << 32;
		break;
	case VIRTIO_MMIO_QUEUE_USED_LOW:
		vq->used = (vq->used & ~0xffffffffull) | v;
		break;
	case VIRTIO_MMIO_QUEUE_USED_HIGH:
		vq->used = (vq->used & 0xffffffffull) | (uint64_t)v << 32;
		break;
	}
}

static void write_reg(struct virtio_mmio *d, uint64_t off, uint32_t v)
{
	switch (off) {
	case VIRTIO_MMIO_DEVICE_FEATURES_SEL:
		d->dev_features_sel = v;
		return;
	case VIRTIO_MMIO_DRIVER_FEATURES:
		if (d->status & VIRTIO_CONFIG_S_FEATURES_OK) {
			log_guest_warn(&d->warn_rl, "%s: features written after FEATURES_OK",
				       d->name);
			return;
		}
		if (d->drv_features_sel == 0)
			d->driver_features = (d->driver_features & ~0xffffffffull) | v;
		else if (d->drv_features_sel == 1)
			d->driver_features = (d->driver_features & 0xffffffffull) | (uint64_t)v
											<< 32;
		else if (v)
			d->driver_features |= 1ull << 63; /* a bit nobody offered: refused later */
		return;
	case VIRTIO_MMIO_DRIVER_FEATURES_SEL:
		d->drv_features_sel = v;
		return;
	case VIRTIO_MMIO_QUEUE_SEL:
		d->queue_sel = v;
		return;
	case VIRTIO_MMIO_QUEUE_NUM:
	case VIRTIO_MMIO_QUEUE_READY:
	case VIRTIO_MMIO_QUEUE_DESC_LOW:
	case VIRTIO_MMIO_QUEUE_DESC_HIGH:
	case VIRTIO_MMIO_QUEUE_AVAIL_LOW:
	case VIRTIO_MMIO_QUEUE_AVAIL_HIGH:
	case VIRTIO_MMIO_QUEUE_USED_LOW:
	case VIRTIO_MMIO_QUEUE_USED_HIGH:
		write_queue_reg(d, off, v);
		return;
	case VIRTIO_MMIO_QUEUE_NOTIFY:
		d->notifies++;
		if (v < d->ops->nr_queues && virtio_mmio_queue_live(d, v))
			d->ops->notify(d, v);
		return;
	case VIRTIO_MMIO_INTERRUPT_ACK:
		d->isr &= ~v;
		update_irq(d);
		return;
	case VIRTIO_MMIO_STATUS:
		write_status(d, v);
		return;
	default:
		log_guest_warn(&d->warn_rl,
			       "%s: write of %#x to read-only or reserved register %#llx", d->name,
			       v, (unsigned long long)off);
	}
}

void virtio_mmio_access(struct virtio_mmio *d, uint64_t offset, uint8_t *data, unsigned size,
			bool is_write)
{
	pthread_mutex_lock(&d->lock);
	if (offset >= VIRTIO_MMIO_CONFIG) {
		/* Device configuration: any width, read-only here; beyond it reads 0. */
		uint64_t off = offset - VIRTIO_MMIO_CONFIG;
		unsigned i;

		if (!is_write)
			for (i = 0; i < size; i++)
				data[i] = off + i < d->ops->config_len
					      ? ((const uint8_t *)d->ops->config)[off + i]
					      : 0;
	} else if (size != 4 || (offset & 3)) {
		/* Registers are 32-bit (4.2.2.2): anything else is ignored, reads give 0. */
		log_guest_warn(&d->warn_rl, "%s: %u-byte access at %#llx: not a 32-bit register",
			       d->name, size, (unsigned long long)offset);
		if (!is_write)
			memset(data, 0, size);
	} else if (is_write) {
		uint32_t v;

		memcpy(&v, data, 4);
		write_reg(d, offset, v);
	} else {
		uint32_t v = read_reg(d, offset);

		memcpy(data, &v, 4);
	}
	pthread_mutex_unlock(&d->lock);
}

/* ---- split virtqueues -------------------------------------------------------------- */

static uint16_t load16(const void *p)
{
	return __atomic_load_n((const uint16_t *)p, __ATOMIC_ACQUIRE);
}

int virtq_pop(struct virtio_mmio *d, unsigned q, bool want_write, struct virtq_chain *c)
{
	struct virtq *vq = &d->vq[q];
	const uint8_t *avail, *descs;
	uint16_t avail_idx, head, next;
	unsigned n;

	if (!virtio_mmio_queue_live(d, q))
		return 0;
	/* rings_ok() checked these when the queue became ready; memory does not move. */
	avail = mem_gpa_ptr(d->mem, vq->avail, 6 + 2ull * vq->num);
	descs = mem_gpa_ptr(d->mem, vq->desc, (uint64_t)vq->num * sizeof(struct vring_desc));
	avail_idx = load16(avail + 2);
	if (avail_idx == vq->last_avail)
		return 0;
	if ((uint16_t)(avail_idx - vq->last_avail) > vq->num) {
		virtio_mmio_fail(d, "queue %u: avail index %u is %u ahead of %u (size %u)", q,
				 avail_idx, (uint16_t)(avail_idx - vq->last_avail), vq->last_avail,
				 vq->num);
		return -1;
	}
	head = load16(avail + 4 + 2 * (vq->last_avail & (vq->num - 1)));
	if (head >= vq->num) {
		virtio_mmio_fail(d, "queue %u: head descriptor %u out of range", q, head);
		return -1;
	}
	c->head = head;
	c->nr = 0;
	c->total = 0;
	next = head;
	for (n = 0;; n++) {
		struct vring_desc desc;
		void *hva;

		if (n >= vq->num) {
			virtio_mmio_fail(d,
					 "queue %u: descriptor chain from %u longer than the "
					 "queue (a loop?)",
					 q, head);
			return -1;
		}
		memcpy(&desc, descs + (size_t)next * sizeof(desc), sizeof(desc));
		if (desc.flags & VRING_DESC_F_INDIRECT) {
			virtio_mmio_fail(d, "queue %u: indirect descriptor %u (not offered)", q,
					 next);
			return -1;
		}
		if (!!(desc.flags & VRING_DESC_F_WRITE) != want_write) {
			virtio_mmio_fail(d, "queue %u: descriptor %u is device-%s", q, next,
					 want_write ? "readable" : "writable");
			return -1;
		}
		hva = desc.len ? mem_gpa_ptr(d->mem, desc.addr, desc.len) : NULL;
		if (!hva) {
			virtio_mmio_fail(d, "queue %u: descriptor %u: buffer %#llx+%u %s", q, next,
					 (unsigned long long)desc.addr, desc.len,
					 desc.len ? "outside guest RAM" : "is empty");
			return -1;
		}
		if (c->total + (uint64_t)desc.len > MAX_CHAIN_BYTES) {
			virtio_mmio_fail(d, "queue %u: chain from %u exceeds %u bytes", q, head,
					 MAX_CHAIN_BYTES);
			return -1;
		}
		c->seg[c->nr++] = (struct virtq_seg){ hva, desc.len, want_write };
		c->total += desc.len;
		if (!(desc.flags & VRING_DESC_F_NEXT))
			break;
		next = desc.next;
		if (next >= vq->num) {
			virtio_mmio_fail(d, "queue %u: next descriptor %u out of range", q, next);
			return -1;
		}
	}
	vq->last_avail++;
	d->chains++;
	return 1;
}

void virtq_push(struct virtio_mmio *d, unsigned q, uint16_t head, uint32_t written)
{
	struct virtq *vq = &d->vq[q];
	uint8_t *used = mem_gpa_ptr(d->mem, vq->used, 6 + 8ull * vq->num);
	struct vring_used_elem e = { .id = head, .len = written };

	memcpy(used + 4 + 8 * (vq->used_idx & (vq->num - 1)), &e, sizeof(e));
	vq->used_idx++;
	/* The element is visible before the index that publishes it. */
	__atomic_store_n((uint16_t *)(used + 2), vq->used_idx, __ATOMIC_RELEASE);
}

void virtq_notify_used(struct virtio_mmio *d, unsigned q)
{
	struct virtq *vq = &d->vq[q];
	const uint8_t *avail = mem_gpa_ptr(d->mem, vq->avail, 2);

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (avail && (load16(avail) & VRING_AVAIL_F_NO_INTERRUPT))
		return;
	d->isr |= VIRTIO_MMIO_INT_VRING;
	update_irq(d);
}
