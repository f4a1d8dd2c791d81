/* SPDX-License-Identifier: MIT */
/*
 * The virtio-mmio transport (version 2, virtio 1.x) and split virtqueues, for plugvm's
 * devices (common/plugvm_virtio.h). Devices are found on the command line (Linux's
 * `virtio_mmio.device=<size>@<base>:<gsi>` words, in slot order) and used only when the
 * plugvm CPUID leaf offers PLUGVM_FEATURE_VIRTIO or such words are present. Rings live in
 * identity-mapped kernel memory (guest physical == kernel virtual below 4 GiB).
 *
 * Locking: the transport keeps no locks. Each device has one owner (its driver) that
 * serializes configuration; each virtqueue is used under its driver's lock. Only
 * virtio_dev_irq_* state is touched from the interrupt handler.
 */
#ifndef PLUGVM_DRIVERS_VIRTIO_MMIO_H
#define PLUGVM_DRIVERS_VIRTIO_MMIO_H

#include <linux/virtio_ring.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/spinlock.h"

#define VIRTIO_QUEUE_SIZE 64 /* entries per queue: desc, avail and used fit in one page */
#define VIRTIO_MAX_QUEUES 2

/* A split virtqueue. Fields below `num` are the driver's shadow state. */
struct virtq {
	uint16_t num; /* entries (power of two); 0: not set up */
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint16_t free_head; /* first free descriptor (free list through .next) */
	uint16_t nr_free;
	uint16_t avail_idx; /* next avail->idx to publish */
	uint16_t last_used; /* used->idx already collected */
};

struct virtio_dev;
/* Called from the device's interrupt (interrupts off, CPU 0) with the acknowledged bits. */
typedef void (*virtio_irq_fn)(struct virtio_dev *d, uint32_t isr, void *arg);

struct virtio_dev {
	unsigned slot; /* position on the command line */
	uint64_t base; /* MMIO window (physical == virtual: identity-mapped, uncached) */
	uint64_t size;
	unsigned gsi;
	uint32_t device_id; /* 0 if the window holds no usable device */
	unsigned nr_queues;
	struct virtq vq[VIRTIO_MAX_QUEUES];
	/* Interrupt side: */
	virtio_irq_fn irq_fn;
	void *irq_arg;
	unsigned long nr_irqs;
	unsigned long nr_config_irqs;
};

/*
 * Find the devices from the command line and check each (magic, version 2, device id).
 * Boot CPU, once, after memory is set up. Returns how many usable devices there are (0 on
 * QEMU); prints warnings only for devices that were announced but are unusable.
 */
unsigned virtio_mmio_probe(void);
/* The device in `slot` (command-line order) with `device_id`, or NULL. Any context. */
struct virtio_dev *virtio_mmio_dev(unsigned slot, uint32_t device_id);

/*
 * Bring the device up: reset, ACKNOWLEDGE, DRIVER, accept VIRTIO_F_VERSION_1 only,
 * FEATURES_OK (checked), set up `nr_queues` queues of VIRTIO_QUEUE_SIZE entries (rings
 * allocated the first time, cleared on later calls), DRIVER_OK. Returns 0, or -EIO with
 * the device marked FAILED. Called by the device's owner; also re-initialises after a reset.
 */
int virtio_dev_init(struct virtio_dev *d, unsigned nr_queues);
/*
 * Steps of virtio_dev_init, for the owner and self-tests: reset (status 0, queues
 * forgotten); negotiate: reset, ACKNOWLEDGE, DRIVER, offer `features`, set FEATURES_OK and
 * read it back: 0 if the device accepted, -5 if it refused (the device is then FAILED).
 */
void virtio_dev_reset(struct virtio_dev *d);
int virtio_dev_negotiate(struct virtio_dev *d, uint64_t features);
/* The device's features (both words), and its status register. */
uint64_t virtio_dev_features(struct virtio_dev *d);
uint32_t virtio_dev_status(struct virtio_dev *d);
/* True if the device asks for a reset (VIRTIO_CONFIG_S_NEEDS_RESET, status 0x40). */
bool virtio_dev_needs_reset(struct virtio_dev *d);

/*
 * Route the device's GSI (level, active high) to CPU 0 and call fn from its handler. The
 * handler reads InterruptStatus, acknowledges it, then calls fn(d, isr, arg). Once.
 */
void virtio_dev_set_irq(struct virtio_dev *d, virtio_irq_fn fn, void *arg);

/* ---- split virtqueues (caller holds the queue's lock) ---------------------------------- */

/*
 * Post one buffer [pa, pa + len) (identity-mapped kernel memory): device-writable if
 * `device_writes`, else device-readable. Returns the descriptor id (the token that
 * virtq_get_used() gives back), or -1 if the queue is full. Not visible until virtq_kick.
 */
int virtq_add(struct virtq *vq, const void *buf, uint32_t len, bool device_writes);
/* Publish posted buffers and notify the device. */
void virtq_kick(struct virtio_dev *d, unsigned q);
/* Take one used buffer: its descriptor id, *len = bytes the device wrote; -1 if none. */
int virtq_get_used(struct virtq *vq, uint32_t *len);
/* Ask the device not to interrupt for this queue's used buffers (a hint, 2.7.7). */
void virtq_no_interrupt(struct virtq *vq, bool off);

/*
 * A pool of `nbufs` receive buffers of `buf_size` bytes in one page, posted on a device-
 * writable queue. Used by one thread (the queue's owner), which takes filled buffers with
 * virtio_rx_get() and gives each back with virtio_rx_fill() once it handled the bytes.
 */
struct virtio_rx {
	struct virtio_dev *dev;
	unsigned q, nbufs, buf_size;
	uint8_t *pool;
	int8_t buf_of[VIRTIO_QUEUE_SIZE]; /* descriptor id -> buffer, or -1 */
};
/* Allocate the page. 0, or -ENOMEM. */
int virtio_rx_init(struct virtio_rx *rx, struct virtio_dev *d, unsigned q, unsigned nbufs,
		   unsigned buf_size);
/* Post every buffer that is not posted (`all`: the queue was reset, post them all). */
void virtio_rx_fill(struct virtio_rx *rx, bool all);
/* The next filled buffer and its length, or NULL. It stays ours until virtio_rx_fill(). */
const uint8_t *virtio_rx_get(struct virtio_rx *rx, uint32_t *len);

/*
 * What a device's owner thread waits for: used receive buffers, or the reset the device
 * asked for (NEEDS_RESET, seen by the interrupt or by a sender). virtio_wait_irq is the
 * virtio_dev_set_irq() callback, with the struct virtio_wait as its argument.
 */
struct thread;
struct virtio_tx;
struct virtio_wait {
	struct thread *thread; /* the owner, once it runs */
	int rx_pending, reset_pending;
};
void virtio_wait_irq(struct virtio_dev *d, uint32_t isr, void *arg);
/* Ask the owner thread to check for a reset. Any context. */
void virtio_wait_request_reset(struct virtio_wait *w);
/* The owner sleeps until something is pending; true when `d` needs a reset now. */
bool virtio_wait_next(struct virtio_wait *w, struct virtio_dev *d);

/*
 * (Re)start a two-queue device whose transmitq (PLUGVM_VIRTIO_TXQ) `tx` feeds: senders
 * paused, virtio_dev_init(), no used-buffer interrupts for the transmitq (it is consumed
 * on the notify), senders resumed. 0 or the virtio_dev_init() error (senders stay paused).
 */
int virtio_dev_start(struct virtio_dev *d, struct virtio_tx *tx);

/* For the self-tests that post malformed rings: publish descriptor `head` as is. */
void virtq_publish_raw(struct virtq *vq, uint16_t head);
/* Store avail->idx = avail_idx + `ahead` (breaks the ring on purpose), and notify. */
void virtq_publish_idx_ahead(struct virtio_dev *d, unsigned q, uint16_t ahead);

/* ---- a transmit queue with a fixed buffer pool, usable from any context -------------- */

#define VIRTIO_TX_MAX_BUFS 32

/*
 * Senders copy bytes into pool buffers (one descriptor each) under `lock` with interrupts
 * off, so printk and cpuhp trace hooks can send from any CPU and context. Used buffers
 * are reclaimed before new ones are taken; with none free the sender polls for a bounded
 * time (the device normally consumes on the notify itself, but this does not rely on it).
 */
struct virtio_tx {
	struct virtio_dev *dev;
	unsigned q;
	unsigned buf_size;
	unsigned nr_bufs;
	uint8_t *pool; /* nr_bufs * buf_size bytes, identity-mapped */
	struct spinlock lock;
	/* Guarded by lock: */
	int owner; /* CPU inside virtio_tx_send(), or -1 (recursion guard) */
	bool paused; /* device being reset: senders get -EAGAIN */
	unsigned nr_free;
	uint8_t free[VIRTIO_TX_MAX_BUFS]; /* stack of free buffer indices */
	int8_t buf_of[VIRTIO_QUEUE_SIZE]; /* descriptor id -> buffer index, -1 */
	uint64_t bytes, kicks, waits, timeouts, refused;
};

/* Allocate the pool (nr_bufs <= VIRTIO_TX_MAX_BUFS) and start paused; `name` names the lock. 0 or -ENOMEM. */
int virtio_tx_init(struct virtio_tx *tx, const char *name, struct virtio_dev *d, unsigned q,
		   unsigned nr_bufs, unsigned buf_size);
/*
 * Stop senders before a device reset (pause = true), or restart them after the queue was
 * set up again (pause = false: every buffer free again). Any context.
 */
void virtio_tx_pause(struct virtio_tx *tx, bool pause);
/*
 * Send n bytes (split into buffers); the device consumes them in order. Any context.
 * Returns 0; -EAGAIN if paused; -EDEADLK if this CPU is already inside (a report printed
 * from the send path); -EIO if the device asks for a reset; -ETIMEDOUT if no buffer came
 * back within `wait_ns`. On an error nothing more was sent.
 */
int virtio_tx_send(struct virtio_tx *tx, const void *p, size_t n, uint64_t wait_ns);

#endif
