/* SPDX-License-Identifier: MIT */
/*
 * The host end of the agent channel (common/plugvm_agent.h) on the virtio agent console:
 * requests with callbacks for their replies, the guest's events, and the framing of the
 * byte stream. Bytes arrive on vCPU threads (the transmitq is drained on QueueNotify);
 * whole messages are queued for the main loop, which owns everything else here.
 */
#ifndef PLUGVM_VMM_AGENT_H
#define PLUGVM_VMM_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plugvm_agent.h"

struct vm;

/* Host-side failures of a request (beside the guest's negative errno statuses). */
#define AGENT_ENOTCONN	(-107) /* no agent: not started, reset, or no virtio */
#define AGENT_ETIMEDOUT (-110) /* no reply in time */
#define AGENT_ESHUTDOWN (-108) /* the VM stops */

/*
 * Requests in flight at once. The guest answers one at a time, so this only bounds what a
 * silent or slow guest makes the host keep: past it, agent_request() says -EAGAIN.
 */
#define AGENT_MAX_PENDING 256

/*
 * Guest messages moved per hold of the agent's queue lock (by a vCPU thread or the main
 * loop); and handled by the main loop at most AGENT_BUDGET per AGENT_PERIOD_MS (6,400 a
 * second, six times what the QMP event limits let out of a guest): the rest stay queued,
 * so a flooding guest gets a bounded share of the main thread (NAPI's budget, in time).
 */
#define AGENT_BATCH	64
#define AGENT_BUDGET	64
#define AGENT_PERIOD_MS 10

/* Fixed-size message framing with resynchronisation on the magic. Pure; unit-tested. */
struct agent_framer {
	uint8_t buf[PLUGVM_AGENT_MSG_SIZE];
	size_t have;
	uint64_t skipped; /* bytes dropped looking for a magic */
	uint64_t frames;
};
/* Feed bytes; `fn` gets every whole message that starts with the magic. */
void agent_framer_feed(struct agent_framer *f, const uint8_t *p, size_t len,
		       void (*fn)(void *ctx, const struct plugvm_agent_msg *m), void *ctx);
void agent_framer_reset(struct agent_framer *f);
/*
 * Check a message from the guest: 0, or a reason it is malformed (version, length, flags,
 * a reply or event type the host never asked for / does not know).
 */
const char *agent_msg_check(const struct plugvm_agent_msg *m);
/*
 * A string field of a guest message (`size` bytes, maybe without a NUL) made fit for QMP
 * clients in place: cut at its first NUL or its last byte; every byte of a control
 * character, of an invalid UTF-8 sequence or of a bidi override becomes '?' (utf8.h).
 * Returns how many bytes were replaced.
 */
size_t agent_str_clean(char *s, size_t size);

/* The agent on the virtio agent channel (none with --virtio off). Returns 0 or -errno. */
int agent_init(struct vm *vm);
void agent_exit(struct vm *vm);
/* Fail every request in flight with AGENT_ESHUTDOWN (before the control socket closes). */
void agent_shutdown(struct vm *vm);

/* Readable when guest messages wait: the main loop then calls agent_process(). -1: none. */
int agent_fd(const struct vm *vm);
/*
 * Main thread: handle queued guest messages (replies, events, resets) within the budget
 * (AGENT_BUDGET per AGENT_PERIOD_MS) and expire overdue requests.
 */
void agent_process(struct vm *vm);
/*
 * Milliseconds to the next request deadline or, with messages left over the budget, to
 * the next period (-1: neither); agent_process() handles both.
 */
int agent_next_timeout_ms(const struct vm *vm);

/*
 * The reply to a request: `status` is the guest's (0 or a negative errno) or an AGENT_E*
 * code, `m` the reply (NULL for host-side failures). Main thread.
 */
typedef void (*agent_reply_fn)(struct vm *vm, void *ctx, int status,
			       const struct plugvm_agent_msg *m);
/*
 * Send request `type` with `len` payload bytes; `fn` gets the reply within `timeout_ms`.
 * Returns 0, or AGENT_ENOTCONN / -EAGAIN (the agent ring is full, or AGENT_MAX_PENDING
 * requests are in flight) / -ENOMEM (fn is not called then). Main thread.
 */
int agent_request(struct vm *vm, uint16_t type, const void *payload, size_t len,
		  unsigned timeout_ms, agent_reply_fn fn, void *ctx);

/* The guest's agent said hello since the last reset; `hello` gets its payload. */
bool agent_connected(const struct vm *vm, struct plugvm_agent_hello *hello);

/* Guest events (EV_*), main thread. Set once by the control socket. */
void agent_set_event_fn(struct vm *vm, void (*fn)(struct vm *vm, const struct plugvm_agent_msg *m));

struct agent_stats {
	uint64_t requests, replies, events, timeouts, malformed, skipped_bytes, dropped;
	uint64_t queued; /* waiting for the main loop now */
};
void agent_get_stats(const struct vm *vm, struct agent_stats *st);

#endif
