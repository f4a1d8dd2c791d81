// SPDX-License-Identifier: MIT
/*
 * Framing and checking of agent messages (common/plugvm_agent.h). No I/O, no state
 * beyond the framer: the unit tests and the fuzzer drive it with arbitrary bytes.
 */
#include <string.h>

#include "agent.h"
#include "../utf8.h"

void agent_framer_reset(struct agent_framer *f)
{
	f->have = 0;
}

/* Drop bytes at the front of the buffer up to the next possible magic. */
static void resync(struct agent_framer *f)
{
	static const uint8_t magic[4] = { PLUGVM_AGENT_MAGIC & 0xff,
					  (PLUGVM_AGENT_MAGIC >> 8) & 0xff,
					  (PLUGVM_AGENT_MAGIC >> 16) & 0xff,
					  PLUGVM_AGENT_MAGIC >> 24 };
	size_t i, k;

	for (i = 1; i < f->have; i++) {
		for (k = 0; k < 4 && i + k < f->have && f->buf[i + k] == magic[k]; k++)
			;
		if (k == 4 || i + k == f->have)
			break; /* a magic, or a prefix of one at the end */
	}
	f->skipped += i;
	memmove(f->buf, f->buf + i, f->have - i);
	f->have -= i;
}

void agent_framer_feed(struct agent_framer *f, const uint8_t *p, size_t len,
		       void (*fn)(void *ctx, const struct plugvm_agent_msg *m), void *ctx)
{
	while (len) {
		size_t n = sizeof(f->buf) - f->have;
		uint32_t magic;

		if (n > len)
			n = len;
		memcpy(f->buf + f->have, p, n);
		f->have += n;
		p += n;
		len -= n;
		for (;;) {
			if (f->have < 4)
				break;
			memcpy(&magic, f->buf, 4);
			if (magic != PLUGVM_AGENT_MAGIC) {
				resync(f);
				continue;
			}
			if (f->have < sizeof(f->buf))
				break;
			{
				struct plugvm_agent_msg m;

				memcpy(&m, f->buf, sizeof(m));
				f->have = 0;
				f->frames++;
				fn(ctx, &m);
			}
			break;
		}
	}
}

const char *agent_msg_check(const struct plugvm_agent_msg *m)
{
	const struct plugvm_agent_hdr *h = &m->hdr;

	if (h->version != PLUGVM_AGENT_VERSION)
		return "wrong version";
	if (h->len > PLUGVM_AGENT_PAYLOAD)
		return "length beyond the payload";
	if (h->flags == PLUGVM_AGENT_F_REPLY) {
		if (h->type < PLUGVM_AGENT_HELLO || h->type > PLUGVM_AGENT_TRACE)
			return "reply of an unknown type";
		if (!h->id)
			return "reply without a request id";
		return NULL;
	}
	if (h->flags == PLUGVM_AGENT_F_EVENT) {
		if (h->type != PLUGVM_AGENT_HELLO && h->type != PLUGVM_AGENT_EV_STATE &&
		    h->type != PLUGVM_AGENT_EV_LOCKDEP)
			return "event of an unknown type";
		if (h->status || h->id)
			return "event with a status or an id";
		return NULL;
	}
	return "neither a reply nor an event";
}

size_t agent_str_clean(char *s, size_t size)
{
	unsigned char *p = (unsigned char *)s;
	size_t i = 0, n, bad = 0;

	if (!size)
		return 0;
	p[size - 1] = 0;
	n = strlen(s);
	while (i < n) {
		size_t len = utf8_printable_len(p + i, n - i);

		if (len) {
			i += len;
			continue;
		}
		p[i++] = '?';
		bad++;
	}
	return bad;
}
