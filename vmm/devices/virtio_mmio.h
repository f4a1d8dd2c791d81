/* SPDX-License-Identifier: MIT */
/*
 * The virtio-mmio transport, version 2 (virtio 1.x), and split virtqueues, for devices
 * that plug a backend in (virtio_console.c). Registers, feature bits and ring layouts are
 * Linux's UAPI ones. The guest is hostile: every register value and every descriptor is
 * checked; a ring that breaks a rule puts the device in NEEDS_RESET (warned, rate-limited)
 * until the driver resets it. Layout and rules: common/plugvm_virtio.h.
 *
 * Threads: MMIO handlers run on vCPU threads, backends may push data from the main loop;
 * one mutex per device serializes both. Backend callbacks run with it held.
 */
#ifndef PLUGVM_VMM_DEVICES_VIRTIO_MMIO_H
#define PLUGVM_VMM_DEVICES_VIRTIO_MMIO_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../log.h"
#include "../mem.h"
#include "plugvm_virtio.h"

#define VIRTIO_MMIO_MAX_QUEUES 2

struct virtio_mmio;

struct virtio_mmio_ops {
	uint32_t device_id; /* VIRTIO_ID_* */
	uint64_t features; /* offered beyond VIRTIO_F_VERSION_1 */
	unsigned nr_queues; /* <= VIRTIO_MMIO_MAX_QUEUES */
	const void *config; /* device configuration space (read-only to the guest) */
	unsigned config_len;
	/* The driver notified queue `q` (it is ready and the device is live). */
	void (*notify)(struct virtio_mmio *d, unsigned q);
	/* The driver reset the device (Status 0), or it failed: drop per-session state. */
	void (*reset)(struct virtio_mmio *d);
};

struct virtq {
	uint32_t num; /* entries, a power of two; 0: not configured */
	bool ready;
	uint64_t desc, avail, used; /* guest-physical ring addresses */
	uint16_t last_avail; /* next avail entry to take */
	uint16_t used_idx; /* our copy of used->idx */
};

struct virtio_mmio {
	const char *name;
	const struct virtio_mmio_ops *ops;
	void *backend; /* the backend's own state */
	const struct guest_mem *mem;
	/* Set the interrupt line (level) of the device. */
	void (*set_irq)(void *irq_opaque, int level);
	void *irq_opaque;

	pthread_mutex_t lock;
	/* Guarded by lock: */
	uint32_t status;
	uint32_t dev_features_sel, drv_features_sel, queue_sel;
	uint64_t driver_features;
	uint32_t isr; /* InterruptStatus: VIRTIO_MMIO_INT_VRING | _CONFIG */
	int irq_level;
	bool failed; /* NEEDS_RESET: rings are ignored until a reset */
	struct virtq vq[VIRTIO_MMIO_MAX_QUEUES];
	uint64_t notifies, chains, bad_rings; /* statistics */
	struct log_ratelimit warn_rl;
};

/* One buffer of a descriptor chain, already checked to lie in guest RAM. */
struct virtq_seg {
	uint8_t *hva;
	uint32_t len;
	bool write; /* device-writable */
};

struct virtq_chain {
	uint16_t head;
	unsigned nr;
	uint32_t total; /* bytes in all segments */
	struct virtq_seg seg[PLUGVM_VIRTIO_QUEUE_MAX];
};

void virtio_mmio_init(struct virtio_mmio *d, const char *name, const struct virtio_mmio_ops *ops,
		      void *backend, const struct guest_mem *mem,
		      void (*set_irq)(void *irq_opaque, int level), void *irq_opaque);
void virtio_mmio_destroy(struct virtio_mmio *d);

/* What a driver's status 0 does (system_reset): configuration forgotten, IRQ low. Takes the lock. */
void virtio_mmio_reset(struct virtio_mmio *d);

/* A register access (bus_handler_fn shape). Takes the lock. */
void virtio_mmio_access(struct virtio_mmio *d, uint64_t offset, uint8_t *data, unsigned size,
			bool is_write);

/* The device is live: DRIVER_OK, not failed, queue `q` ready. Lock held. */
bool virtio_mmio_queue_live(const struct virtio_mmio *d, unsigned q);

/*
 * Take the next available chain of queue `q` into `c`; every segment must be device-
 * writable (`want_write`) or device-readable. Returns 1 with a chain, 0 when the queue is
 * empty or not live, -1 after a broken ring (the device is now failed). Lock held.
 */
int virtq_pop(struct virtio_mmio *d, unsigned q, bool want_write, struct virtq_chain *c);

/* Return chain `head` with `written` bytes to the used ring. Lock held. */
void virtq_push(struct virtio_mmio *d, unsigned q, uint16_t head, uint32_t written);

/* Interrupt the driver for used buffers on `q` unless it asked not to be. Lock held. */
void virtq_notify_used(struct virtio_mmio *d, unsigned q);

/* Put the device in NEEDS_RESET with a (rate-limited) warning. Lock held. */
void virtio_mmio_fail(struct virtio_mmio *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
