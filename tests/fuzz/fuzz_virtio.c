// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: vmm/devices/virtio_mmio.c and vmm/control/agent_frame.c, what a
 * hostile guest controls. The input: a 16-bit length L (at most 4096), L bytes that become guest RAM at
 * 0 and again at 4 KiB (descriptors, avail and used rings, buffers), then a program of
 * 32-bit register accesses (2-byte offset, bit 15 = read; 4-byte value) run against a
 * device whose queues the fuzzer may set up, notify, fail and reset at will. Every chain the device accepts must lie inside guest RAM, and
 * the bytes of every transmitted chain go through the agent framer, whose output must be
 * whole messages.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/control/agent.h"
#include "vmm/devices/virtio_mmio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RAM (64u << 10)

static struct guest_mem mem;
static struct agent_framer framer;
static struct virtq_chain chain;

static void set_irq(void *opaque, int level)
{
	(void)opaque;
	if (level != 0 && level != 1)
		abort();
}

static void on_frame(void *ctx, const struct plugvm_agent_msg *m)
{
	(void)ctx;
	if (m->hdr.magic != PLUGVM_AGENT_MAGIC)
		abort();
	(void)agent_msg_check(m);
}

static void on_notify(struct virtio_mmio *d, unsigned q)
{
	const uint8_t *lo = mem.regions[0].hva, *hi = lo + RAM;
	int r;

	while ((r = virtq_pop(d, q, q == 0, &chain)) > 0) {
		for (unsigned i = 0; i < chain.nr; i++) {
			if (chain.seg[i].hva < lo || chain.seg[i].hva + chain.seg[i].len > hi)
				abort();
			if (q == 1)
				agent_framer_feed(&framer, chain.seg[i].hva, chain.seg[i].len,
						  on_frame, NULL);
			else
				memset(chain.seg[i].hva, 0x5a, chain.seg[i].len);
		}
		virtq_push(d, q, chain.head, q == 0 ? chain.total : 0);
	}
	if (r == 0)
		virtq_notify_used(d, q);
}

static void on_reset(struct virtio_mmio *d)
{
	(void)d;
	agent_framer_reset(&framer);
}

static const struct virtio_mmio_ops ops = {
	.device_id = 3,
	.nr_queues = 2,
	.notify = on_notify,
	.reset = on_reset,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct virtio_mmio dev;
	size_t n;
	uint16_t len;

	if (size < 2)
		return 0;
	memcpy(&len, data, 2);
	data += 2;
	size -= 2;
	n = len > 4096 ? 4096 : len;
	if (n > size)
		n = size;

	if (!mem.nr_regions && mem_init(&mem, RAM))
		abort();
	memset(mem.regions[0].hva, 0, RAM);
	/* Rings and buffers live in the first pages: the input's first 4 KiB, twice. */
	memcpy(mem.regions[0].hva, data, n);
	memcpy(mem.regions[0].hva + 4096, data, n);
	agent_framer_reset(&framer);
	virtio_mmio_init(&dev, "fuzz", &ops, NULL, &mem, set_irq, NULL);
	for (size_t off = n; off + 6 <= size; off += 6) {
		uint16_t reg;
		uint32_t v;

		memcpy(&reg, data + off, 2);
		memcpy(&v, data + off + 2, 4);
		virtio_mmio_access(&dev, reg & 0x1fc, (uint8_t *)&v, 4, !(reg & 0x8000));
	}
	virtio_mmio_destroy(&dev);
	return 0;
}
