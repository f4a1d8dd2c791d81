/* SPDX-License-Identifier: MIT */
/*
 * The guest end of the agent channel (slot PLUGVM_VIRTIO_SLOT_AGENT, common/plugvm_agent.h),
 * the transport: virtio framing, the "agent" thread that takes the host's requests in
 * order, one at a time, and hands each to the agent service (struct agent_service, in
 * apps/agent_service.c: what each request does), and events the service sends from any
 * context (agent_send_event()).
 *
 * The transmit side works from agent_init() on; the session (HELLO event, then events)
 * starts with agent_start(), after the boot CPUs are up: the boot bring-up's states are
 * not sent (the host's session begins with HELLO, and the boot stays short).
 */
#ifndef PLUGVM_DRIVERS_AGENT_H
#define PLUGVM_DRIVERS_AGENT_H

#include <stdbool.h>
#include <stdint.h>

#include "plugvm_agent.h"

struct virtio_dev;

/* What the requests do: the service behind the channel. */
struct agent_service {
	/* Fill all of the HELLO payload: sent at each session start, and HELLO's reply. */
	void (*hello)(struct plugvm_agent_hello *h);
	/*
	 * Answer request `type`: its argument is `arg` (`arg_len` bytes from the message,
	 * copied aligned, zero beyond); build the reply payload in `out`
	 * (PLUGVM_AGENT_PAYLOAD bytes, aligned) and its length in *len. Returns the status,
	 * 0 or PLUGVM_AGENT_E* (PLUGVM_AGENT_ENOSYS for a type it does not know). Agent
	 * thread, one request at a time.
	 */
	int (*request)(uint16_t type, const void *arg, uint32_t arg_len, void *out, uint32_t *len);
	/* The first session began (HELLO sent): hook the events up. Agent thread, once. */
	void (*started)(void);
};

/* Boot CPU, once, after virtio_mmio_probe(): bring up the device's transmit side.
 * Returns true if the device exists and works; false (silently) without one. */
bool agent_init(void);
/*
 * Start the agent thread with `svc` (nothing without an agent device): it says HELLO,
 * calls svc->started() and answers requests. Returns once it has. Thread context.
 */
void agent_start(const struct agent_service *svc);
/*
 * Send an event (PLUGVM_AGENT_EV_*) if a session is up, else count it dropped. Any CPU,
 * any context (an arriving CPU with interrupts off); never sleeps.
 */
void agent_send_event(uint16_t type, const void *payload, uint32_t len);

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
