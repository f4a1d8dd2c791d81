/* SPDX-License-Identifier: MIT */
/*
 * The virtio-console devices on virtio-mmio: the guest's console and the agent channel. The
 * console writes to the VM's console (console.h); the agent channel hands its bytes to
 * whoever set virtio_agent_ops (the control plane's agent.c), and knows nothing of it.
 */
#ifndef PLUGVM_VMM_DEVICES_VIRTIO_CONSOLE_H
#define PLUGVM_VMM_DEVICES_VIRTIO_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vm;

/*
 * virtio-mmio devices (common/plugvm_virtio.h): the virtio console (slot 0) and the agent
 * channel (slot 1), unless cfg->virtio_disabled. vm->virtio stays NULL without them.
 */
int virtio_devices_init(struct vm *vm);
void virtio_devices_exit(struct vm *vm);
/* Reset every device as its driver would (system_reset; the agent's session ends). */
void virtio_devices_reset(struct vm *vm);
/* The guest command-line words that announce the devices (" virtio_mmio.device=..."). */
int virtio_devices_cmdline(const struct vm *vm, char *buf, size_t len);
/* The guest's virtio console takes input (its receiveq is live). Any thread. */
bool virtio_console_live(struct vm *vm);
/* Queue typed bytes for the virtio console. Returns bytes taken (the rest is dropped). */
size_t virtio_console_rx(struct vm *vm, const uint8_t *buf, size_t len);
/* Queue one whole message for the agent channel: 0, -ENODEV, or -EAGAIN when full. */
int virtio_agent_send(struct vm *vm, const void *msg, size_t len);

/*
 * Who hears the agent channel: the bytes the guest sends and its driver's resets. Both run
 * on the notifying vCPU's thread with the device's lock held, so they must not call into
 * the device. Set once, before vCPUs run (agent_init()); without it the bytes are dropped.
 */
struct virtio_agent_ops {
	void *opaque;
	void (*rx)(void *opaque, const uint8_t *buf, size_t len);
	void (*reset)(void *opaque);
};
void virtio_agent_set_ops(struct vm *vm, const struct virtio_agent_ops *ops);

#endif
