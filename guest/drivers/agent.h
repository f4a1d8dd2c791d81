/* SPDX-License-Identifier: MIT */
/*
 * The guest end of the agent channel (slot PLUGVM_VIRTIO_SLOT_AGENT, common/plugvm_agent.h):
 * the "agent" thread answers the host's requests in order, one at a time, and the guest
 * sends events: EV_STATE for every cpuhp callback run (any CPU, any context) and
 * EV_LOCKDEP for every lock-validator report.
 *
 * The transmit side works from agent_init() on; the session (HELLO event, then events)
 * starts with agent_start(), after the boot CPUs are up: the boot bring-up's states are
 * not sent (the host's session begins with HELLO, and the boot stays short).
 */
#ifndef PLUGVM_DRIVERS_AGENT_H
#define PLUGVM_DRIVERS_AGENT_H

#include <stdbool.h>
#include <stdint.h>

struct virtio_dev;

/* Boot CPU, once, after virtio_mmio_probe(): bring up the device's transmit side.
 * Returns true if the device exists and works; false (silently) without one. */
bool agent_init(void);
/* Start the agent thread: it says HELLO and installs the event hooks. Thread context. */
void agent_start(void);

/*
 * Self-tests: take the device away from the agent (the thread stops between messages,
 * senders drop their events) and give it back. agent_device_claim returns NULL without an
 * agent. agent_device_release resets the device, sets it up again, reposts the receive
 * buffers and sends HELLO; returns 0 or the error of the first step that failed. Thread
 * context.
 */
struct virtio_dev *agent_device_claim(void);
int agent_device_release(void);

struct agent_stats {
	uint64_t requests, replies, events, events_dropped, malformed, skipped_bytes, resets;
};
void agent_get_stats(struct agent_stats *st);

#endif
